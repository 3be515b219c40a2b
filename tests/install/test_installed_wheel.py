"""The wheel as an end user gets it (issue 40): built from the sdist, installed into a new virtual environment
with only its declared runtime dependencies (tests/install/wheelenv.py), and the main job run from an empty
directory outside the checkout: boards check, generate into an upstream clone, a stand-in build (the idf.py
stand-in given by path, as a user would put ESP-IDF's idf.py on PATH), an asset bundle, the release site,
provision from the release, and `hil run --virtual 1`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from tests.install.wheelenv import ROOT, build_dists, make_env
from tests.upstream_repo import UpstreamUnavailable, clone_upstream

VARIANT = "bread-compact-wifi"  # esp32s3, 16 MB (upstream's partitions/v2/16m.csv)


class Job:
    def __init__(self, bin_dir: Path, cwd: Path, env: dict[str, str]) -> None:
        self.bin, self.cwd, self.env = bin_dir, cwd, env
        self.timings: dict[str, float] = {}

    def __call__(self, step: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        started = time.monotonic()
        proc = subprocess.run([str(self.bin / "xzbuild"), *args], cwd=self.cwd, env=self.env, capture_output=True,
                              text=True, timeout=300, check=False)
        self.timings[step] = time.monotonic() - started
        if check:
            assert proc.returncode == 0, f"xzbuild {' '.join(args)} (exit {proc.returncode}):\n" \
                                         f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("wheel")
    started = time.monotonic()
    sdist, wheel = build_dists(tmp)
    built = time.monotonic()
    bin_dir = make_env(tmp, wheel)
    return {"tmp": tmp, "sdist": sdist, "wheel": wheel, "bin": bin_dir,
            "build_s": built - started, "install_s": time.monotonic() - built}


def test_the_wheel_carries_what_the_commands_read(installed: dict[str, object]) -> None:
    wheel = installed["wheel"]
    assert isinstance(wheel, Path)
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    templates = {p.relative_to(ROOT).as_posix() for p in (ROOT / "templates").rglob("*") if p.is_file()}
    assert templates and {f"xzbuild/_data/{t}" for t in templates} <= names  # every template, site CSS/JS
    npm = ROOT / ".venv" / "npm" / "node_modules"
    web = {f"xzbuild/_data/npm/node_modules/esp-web-tools/dist/web/{p.name}"
           for p in (npm / "esp-web-tools" / "dist" / "web").glob("*.js")}
    assert web and web <= names
    assert "xzbuild/_data/npm/node_modules/esptool-js/bundle.js" in names
    assert {"hil/tests/test_xiaozhi.py", "hil/tests/conftest.py"} <= names  # the suite `hil run` runs
    # every file of the shipped packages (data files beside the modules included)
    shipped = {p.relative_to(ROOT).as_posix() for package in ("xzbuild", "hil", "assets_gen")
               for p in (ROOT / package).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert shipped <= names, sorted(shipped - names)


def test_the_installed_wheel_runs_the_main_job_outside_the_checkout(installed: dict[str, object]) -> None:
    tmp, bin_dir = installed["tmp"], installed["bin"]
    assert isinstance(tmp, Path) and isinstance(bin_dir, Path)
    started = time.monotonic()
    ws = tmp / "ws"
    shutil.copytree(ROOT / "boards", ws / "boards")  # a board set, found by searching upward from run/
    run = ws / "run"
    run.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XZBUILD_BOARDS", "XZBUILD_WEB_TOOLS")
           and not k.startswith("XZ_STANDIN_")}
    # the idf.py stand-in, given by path: a user's idf.py on PATH (`--idf local`), run by the new environment
    tools = tmp / "tools"
    tools.mkdir()
    (tools / "idf.py").write_text(f'#!/bin/sh\nexec "{bin_dir / "python"}" "{ROOT / "tests/standin/idf.py"}" "$@"\n')
    (tools / "idf.py").chmod(0o755)
    env["PATH"] = os.pathsep.join([str(tools), str(bin_dir), "/usr/bin", "/bin"])
    env["XZ_STANDIN_ASSETS"] = "0"  # no 8 MB assets partition image: the HIL flash stays small

    where = subprocess.run([str(bin_dir / "python"), "-c", "import xzbuild, hil, sys; print(xzbuild.__file__); "
                            "print(hil.__file__); print(sys.path)"],
                           cwd=run, env=env, capture_output=True, text=True, check=True).stdout
    assert str(ROOT) not in where and str(bin_dir.parent) in where.splitlines()[0], where
    dists = subprocess.run([str(bin_dir / "python"), "-c", "import importlib.metadata as m; "
                            "print('\\n'.join(sorted({d.metadata['Name'].lower() for d in m.distributions()})))"],
                           cwd=run, env=env, capture_output=True, text=True, check=True).stdout.split()
    # what `pipx install xzbuild` brings: pytest-timeout (hil run's --timeout), not labgrid's pyserial fork
    assert "pytest-timeout" in dists and "pyserial-labgrid" not in dists and "labgrid" not in dists, dists

    job = Job(bin_dir, run, env)
    assert "ok:" in job("boards check", "boards", "check").stdout
    try:
        firmware = clone_upstream(tmp / "xiaozhi-esp32")
    except UpstreamUnavailable as exc:
        pytest.fail(f"the upstream oracle is missing: {exc}")
    job("generate", "generate", "--firmware", str(firmware))
    job("generate --check", "generate", "--firmware", str(firmware), "--check")
    job("matrix build", "matrix", "build", VARIANT, "--idf", "local", "--idf-version", "6.0.2", "--firmware",
        str(firmware), "--relative-urls", "--out", "dist", "--cache-dir", "cache", "--jobs", "1")
    assert (run / "dist" / VARIANT / "flasher_args.json").is_file()
    job("assets build", "assets", "build", VARIANT, "--out", "assets")
    assert (run / "assets" / VARIANT / "assets.bin").is_file()
    job("release site", "release", "site", "--dist", "dist", "-o", "site")
    site = run / "site"
    assert (site / "index.html").is_file() and (site / "static" / "esp-web-tools" / "install-button.js").is_file()
    assert (site / "static" / "site.css").read_bytes() == (ROOT / "templates" / "site" / "site.css").read_bytes()
    facts = json.loads(job("provision", "provision", VARIANT, "--release", "dist", "--ota-url",
                           "http://192.168.1.10:8002/xiaozhi/ota/", "-o", "nvs.bin", "--json").stdout)
    assert (facts["nvs_offset"], facts["nvs_size"]) == (0x9000, 0x4000)  # upstream 16m.csv: nvs 0x9000 0x4000
    hil = job("hil run", "hil", "run", "--virtual", "1", "--dist", "dist", "--out", "hil", "--json", check=False)
    results = [json.loads(line) for line in hil.stdout.splitlines() if line.startswith("{")]
    assert hil.returncode == 0 and results and all(r["status"] == "passed" for r in results), \
        f"{hil.stdout[-3000:]}\n{hil.stderr[-3000:]}"
    assert all(r["tests"].get("tests", 0) > 0 and not r["tests"].get("failures") for r in results), results
    total = time.monotonic() - started
    print(f"\nwheel: built sdist + wheel {installed['build_s']:.1f} s, new venv + install {installed['install_s']:.1f} s;"
          f" main job {total:.1f} s: " + ", ".join(f"{k} {v:.1f} s" for k, v in job.timings.items()))
