"""Confinement (issue 25, item 3): release directories, asset input directories and build output trees.

A release directory is copied between machines, so ``release site`` must read only regular files inside
``--dist`` (no ``..`` anywhere in a named path, no symbolic link) and write only inside ``-o``; an input
directory of assets must not let a link carry a file from outside into a published bundle; ``matrix build``
must not write through a symbolic link inside ``--out`` or ``--cache-dir``. Each row plants a secret outside
the directory and checks, from the file system, that it was neither published nor overwritten.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.conftest import REPO, assert_clean_failure, run_cli

WEB_TOOLS = REPO / ".venv" / "npm" / "node_modules" / "esp-web-tools"
SECRET = b"root:$6$secret-hash:19000:0:99999:7:::\n"


def make_dist(root: Path, files: list[dict[str, object]] | None = None, **record: object) -> Path:
    """A one-variant release directory as `matrix build` lays it out (docs/release-site.md): v1/release.json
    naming v1/app.bin."""
    dist = root / "dist"
    (dist / "v1").mkdir(parents=True)
    (dist / "v1" / "app.bin").write_bytes(b"\xe9app")
    data = {"full_name": "v1", "board": "v1", "target": "esp32s3",
            "files": files if files is not None else [{"role": "app", "path": "v1/app.bin"}], **record}
    (dist / "v1" / "release.json").write_text(json.dumps(data))
    return dist


def site(root: Path, dist: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code, _out, err = run_cli(["release", "site", "--dist", str(dist), "-o", str(root / "out" / "site"),
                               "--web-tools", str(WEB_TOOLS), "--date", "2026-12-01",
                               "--boards", str(root / "no-boards")], capsys)  # no board facts: a fast run
    return code, err


def _dotdot_inside_path(root: Path) -> Path:
    return make_dist(root, [{"role": "app", "path": "v1/../../secret"}])


def _deep_dotdot_writes_outside(root: Path) -> Path:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "x").write_bytes(SECRET)
    return make_dist(root, [{"role": "app", "path": "v1/../../a/b/x"}, {"role": "app", "path": "v1/../../../../x"}])


def _symlinked_file(root: Path) -> Path:
    dist = make_dist(root, [{"role": "app", "path": "v1/link.bin"}])
    (dist / "v1" / "link.bin").symlink_to(root / "secret")
    return dist


def _symlinked_dir_in_path(root: Path) -> Path:
    dist = make_dist(root, [{"role": "app", "path": "v1/sub/secret"}])
    (dist / "v1" / "sub").symlink_to(root)
    return dist


def _symlinked_variant_dir(root: Path) -> Path:
    dist = make_dist(root)
    elsewhere = root / "elsewhere" / "v2"
    elsewhere.mkdir(parents=True)
    (elsewhere / "release.json").write_text(json.dumps({"full_name": "v2", "files": [{"path": "v2/s"}]}))
    (elsewhere / "s").write_bytes(SECRET)
    (dist / "v2").symlink_to(elsewhere)
    return dist


def _manifest_outside(root: Path) -> Path:
    (root / "m.json").write_text(json.dumps({"builds": [{"chipFamily": "ESP32-S3", "parts": [
        {"path": "secret", "offset": 0}]}]}))
    return make_dist(root, webtools={"factory": "v1/../../m.json"})


def _symlinked_release_record(root: Path) -> Path:
    dist = make_dist(root)
    (root / "other.json").write_text(json.dumps({"full_name": "v1", "files": [{"path": "v1/app.bin"}]}))
    (dist / "v1" / "release.json").unlink()
    (dist / "v1" / "release.json").symlink_to(root / "other.json")
    return dist


def _absolute_path(root: Path) -> Path:
    return make_dist(root, [{"role": "app", "path": str(root / "secret")}])


def _full_name_climbs(root: Path) -> Path:
    dist = make_dist(root, full_name="../../x")
    (dist / "v1" / "preview.png").write_bytes(b"\x89PNG")
    return dist


# (id, damage → dist, stderr regex)
SITE_CASES: list[tuple[str, Callable[[Path], Path], str]] = [
    # refused by the site's link rule (xzbuild/release/urls.py) before the file is ever opened
    ("dotdot-inside-path", _dotdot_inside_path, r"'v1/\.\./\.\./secret' has an empty, \. or \.\. segment"),
    ("deep-dotdot-writes-outside-o", _deep_dotdot_writes_outside, r"has an empty, \. or \.\. segment"),
    ("symlinked-file", _symlinked_file, r"v1/link\.bin: .*link\.bin is a symbolic link"),
    ("symlinked-dir-in-path", _symlinked_dir_in_path, r"v1/sub/secret: .*sub is a symbolic link"),
    ("symlinked-variant-dir", _symlinked_variant_dir, r"dist/v2: a symbolic link in the release directory"),
    ("manifest-outside-dist", _manifest_outside, r"'v1/\.\./\.\./m\.json': expected a relative path"),
    ("symlinked-release-record", _symlinked_release_record, r"v1/release\.json: .*is a symbolic link"),
    ("absolute-path", _absolute_path, r"secret' is not relative \(a leading / is the site root"),
    ("full-name-climbs", _full_name_climbs, r"release\.json: full_name '\.\./\.\./x' is not a variant name"),
]


@pytest.mark.parametrize(("damage", "expected"), [c[1:] for c in SITE_CASES], ids=[c[0] for c in SITE_CASES])
def test_release_site_reads_only_inside_dist(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             damage: Callable[[Path], Path], expected: str) -> None:
    (tmp_path / "secret").write_bytes(SECRET)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and not p.is_symlink()}
    dist = damage(tmp_path)
    code, err = site(tmp_path, dist, capsys)
    assert_clean_failure(code, err, expected)
    out = tmp_path / "out"
    assert not out.exists() or list(out.iterdir()) == []  # no site, and no stage left behind either
    assert not (tmp_path / "x").exists() and not (tmp_path.parent / "x").exists()  # nothing written outside -o
    assert all(p.read_bytes() == data for p, data in before.items())


def test_release_site_still_publishes_a_plain_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = make_dist(tmp_path)
    code, err = site(tmp_path, dist, capsys)
    assert code == 0, err
    assert (tmp_path / "out" / "site" / "fw" / "v1" / "app.bin").read_bytes() == b"\xe9app"


def test_release_site_removes_the_stage_of_a_killed_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run killed with SIGKILL leaves `.site.<pid>.tmp` (no handler runs); the next run removes it, and the
    stage of a run whose process is still alive is left alone."""
    dist = make_dist(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    try:
        stale = out / f".site.{int(dead.stdout)}.tmp"
        (stale / "fw").mkdir(parents=True)
        (stale / "fw" / "half.bin").write_bytes(b"half")
        old = out / f".site.{int(dead.stdout)}.old.tmp"
        old.mkdir()
        live = out / f".site.{child.pid}.tmp"
        live.mkdir()
        code, err = site(tmp_path, dist, capsys)
        assert code == 0, err
        assert not stale.exists() and not old.exists()
        assert live.is_dir()
    finally:
        child.kill()
        child.wait()


def test_release_site_failure_leaves_no_stage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = make_dist(tmp_path, [{"role": "app", "path": "v1/missing.bin"}])
    code, err = site(tmp_path, dist, capsys)
    assert_clean_failure(code, err, r"v1/missing\.bin: named here but missing")
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_srmodels_refuses_a_link_to_etc_shadow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The model dir `wn9_x/` holding `wn9_data -> /etc/shadow` (the case in the issue) must not be packed."""
    model = tmp_path / "wn9_x"
    model.mkdir()
    (model / "_MODEL_INFO_").write_bytes(b"wn9_x\n")
    (model / "wn9_data").symlink_to("/etc/shadow")
    code, _out, err = run_cli(["assets", "srmodels", str(model), "-o", str(tmp_path / "srmodels.bin")], capsys)
    assert_clean_failure(code, err, r"wn9_data: symbolic link to /etc/shadow points outside")
    assert not (tmp_path / "srmodels.bin").exists()


def test_srmodels_refuses_a_link_to_a_file_outside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "secret").write_bytes(SECRET)
    model = tmp_path / "wn9_x"
    model.mkdir()
    (model / "_MODEL_INFO_").write_bytes(b"wn9_x\n")
    (model / "wn9_data").symlink_to(tmp_path / "secret")
    code, _out, err = run_cli(["assets", "srmodels", str(model), "-o", str(tmp_path / "srmodels.bin")], capsys)
    assert_clean_failure(code, err, r"wn9_data: symbolic link to .*secret points outside")
    assert not (tmp_path / "srmodels.bin").exists()


def test_srmodels_keeps_a_link_inside_the_model_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "wn9_x"
    model.mkdir()
    (model / "_MODEL_INFO_").write_bytes(b"wn9_x\n")
    (model / "wn9_real").write_bytes(b"data")
    (model / "wn9_data").symlink_to("wn9_real")
    code, _out, err = run_cli(["assets", "srmodels", str(model), "-o", str(tmp_path / "srmodels.bin")], capsys)
    assert code == 0, err
    assert (tmp_path / "srmodels.bin").read_bytes().count(b"data") >= 2


def test_extra_files_refuse_a_fifo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A FIFO in an input directory would block the packer forever; it is refused by name."""
    extra = tmp_path / "extra"
    extra.mkdir()
    os.mkfifo(extra / "pipe.bin")
    code, _out, err = run_cli(["assets", "build", "-o", str(tmp_path / "a.bin"), "--extra-files", str(extra)],
                              capsys)
    assert_clean_failure(code, err, r"pipe\.bin: not a regular file or directory")


# (id, option, the linked subdirectory) — `matrix build` writes below each of these
LINKED = [
    ("out-logs", "--out", "logs"),
    ("out-variant-dir", "--out", "bread-compact-wifi"),
    ("cache-objects", "--cache-dir", "objects"),
    ("cache-object-shard", "--cache-dir", "objects/ab"),
    ("cache-work", "--cache-dir", "work"),
]


@pytest.mark.parametrize(("option", "sub"), [c[1:] for c in LINKED], ids=[c[0] for c in LINKED])
def test_matrix_build_refuses_symlinked_subdirectories(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        option: str, sub: str) -> None:
    out, cache, elsewhere = tmp_path / "out", tmp_path / "cache", tmp_path / "elsewhere"
    for d in (out, cache, elsewhere):
        d.mkdir()
    root = out if option == "--out" else cache
    (root / sub).parent.mkdir(parents=True, exist_ok=True)
    (root / sub).symlink_to(elsewhere)
    code, _out, err = run_cli(["matrix", "build", "bread-compact-wifi", "--idf", "standin", "--relative-urls",
                               "--boards", str(REPO / "boards"), "--out", str(out), "--cache-dir", str(cache)],
                              capsys)
    assert_clean_failure(code, err, rf"{option} .*/{sub} is a symbolic link .*must be a real directory")
    assert list(elsewhere.iterdir()) == []


# (id, manifest.json of the base build) — `matrix size --base` reads a build output downloaded from CI
SIZE_CASES = [
    ("app-path-climbs", {"variants": [{"full_name": "v1", "target": "esp32s3", "app_size": 4,
                                       "files": [{"role": "app", "path": "../secret"}]}]},
     r"'\.\./secret': expected a relative path of plain names"),
    ("deep-manifest", None, r"manifest\.json:1: nests deeper than 64 levels"),
]


@pytest.mark.parametrize(("manifest", "expected"), [c[1:] for c in SIZE_CASES], ids=[c[0] for c in SIZE_CASES])
def test_matrix_size_reads_only_inside_the_build_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         manifest: object, expected: str) -> None:
    (tmp_path / "secret").write_bytes(SECRET)
    for side in ("base", "head"):
        (tmp_path / side / "v1").mkdir(parents=True)
        text = "[" * 5000 + "]" * 5000 if manifest is None else json.dumps(manifest)
        (tmp_path / side / "manifest.json").write_text(text)
    code, _out, err = run_cli(["matrix", "size", "--base", str(tmp_path / "base"), str(tmp_path / "head")], capsys)
    assert_clean_failure(code, err, expected)
