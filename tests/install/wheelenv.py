"""An installed xzbuild that cannot see the checkout: the sdist built from a copy of the sources, the wheel
built from the unpacked sdist (so the sdist must carry everything the wheel needs), installed into a new
virtual environment without system site-packages.

pip cannot download here, so the wheel's dependencies come from the shared venv, but only those the wheel's
own metadata asks for: the runtime closure of its ``Requires-Dist`` (no extras), each distribution's
top-level files (RECORD) linked into one directory that a ``.pth`` line puts on the new environment's path.
A path line in a ``.pth`` adds a directory without processing the ``.pth`` files in it, so the checkout's
editable finder in the shared venv is never loaded; what a dependency's metadata does not declare is not
there (a missing runtime dependency fails as it would after ``pipx install``)."""

from __future__ import annotations

import email
import importlib.metadata as md
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

from packaging.requirements import Requirement

from tests.install.deps import closure

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "Makefile", "templates", "packaging",
           "xzbuild", "hil", "assets_gen"]
NPM = ROOT / ".venv" / "npm" / "node_modules"


def _pep517(hook: str, source: Path, out: Path, env: dict[str, str]) -> Path:
    code = ("import sys, setuptools.build_meta as b; "
            f"print(b.{hook}(sys.argv[1]))")
    proc = subprocess.run([sys.executable, "-c", code, str(out)], cwd=source, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{hook} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return out / proc.stdout.strip().splitlines()[-1]


def build_dists(tmp: Path) -> tuple[Path, Path]:
    """(sdist, wheel): the sdist from a copy of the sources, the wheel from the unpacked sdist."""
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if not path.exists():
            continue  # (an older tree without setup.py / MANIFEST.in: its wheel is what setuptools makes of it)
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    out = tmp / "dist"
    out.mkdir()
    env = {**os.environ, "XZBUILD_NPM_MODULES": str(NPM)}
    env.pop("PYTHONPATH", None)
    sdist = _pep517("build_sdist", src, out, env)
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp / "unpacked", filter="data")
    (unpacked,) = (tmp / "unpacked").iterdir()
    env.pop("XZBUILD_NPM_MODULES")  # the sdist carries the npm bundles itself
    wheel = _pep517("build_wheel", unpacked, out, env)
    return sdist, wheel


def wheel_requirements(wheel: Path) -> list[Requirement]:
    """The wheel's ``Requires-Dist`` lines that apply without extras."""
    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(zf.read(meta_name))
    reqs = [Requirement(text) for text in meta.get_all("Requires-Dist") or []]
    return [r for r in reqs if r.marker is None or r.marker.evaluate({"extra": ""})]


def _top_levels(dist: md.Distribution) -> set[str]:
    tops = set()
    for f in dist.files or []:
        parts = Path(str(f)).parts
        if parts and parts[0] != ".." and not parts[0].endswith(".pth") and parts[0] != "__pycache__":
            tops.add(parts[0])
    return tops


def make_env(tmp: Path, wheel: Path) -> Path:
    """A new venv with the wheel installed (pip, offline, no dependencies resolved by it) and the wheel's
    runtime dependency closure linked in; returns its bin/ directory."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index",
                    "--no-cache-dir", "--disable-pip-version-check", str(wheel)], check=True, timeout=300,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    shared = Path(sysconfig.get_paths()["purelib"])
    deps = venv / "deps"
    deps.mkdir()
    for dist in closure(wheel_requirements(wheel)).values():
        for top in _top_levels(dist):
            source = shared / top
            if source.exists() and not (deps / top).exists():
                (deps / top).symlink_to(source)
    (site / "zz_xzbuild_deps.pth").write_text(f"{deps}\n")
    return venv / "bin"
