"""docs/add-a-board.md, step by step, on a fresh copy of this repository's boards and the pinned upstream tree.

Each step is the command the guide shows (run through the real CLI entry point); the checks are the facts the
guide promises: the scaffold checks, generate writes the board's files, `matrix select` picks the untracked
board, the stand-in build carries the `assets build` bundle at the assets offset, esptool writes it onto a
virtual board, and `hil run --virtual` passes on the build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.importer.conftest import export_tree

REPO = Path(__file__).resolve().parents[2]
STANDIN = REPO / "tests" / "standin"
VARIANT = "acme-voice-kit"


def xz(*args: str, env: dict[str, str] | None = None) -> str:
    """One guide command, as a user runs it (its own process, in the project directory); it must succeed."""
    proc = subprocess.run([sys.executable, "-m", "xzbuild.cli.main", *args], capture_output=True, text=True,
                          env=env, cwd=os.getcwd(), timeout=600)
    assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])
    return proc.stdout


def test_add_a_board_guide(upstream_history: Path, tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"  # a clone of the xzbuild repo: boards/ under git
    shutil.copytree(REPO / "boards", project / "boards")
    git = ["git", "-C", str(project), "-c", "user.email=guide@example.com", "-c", "user.name=guide"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "boards"], check=True)
    firmware = export_tree(upstream_history, "HEAD", tmp_path / "xiaozhi-esp32")
    monkeypatch.chdir(project)

    # 1. Scaffold: field names in --set; the file starts with the schema modeline.
    xz("boards", "new", "acme/voice-kit", "--archetype", "i2s-simplex-oled", "--target", "esp32s3",
       "--label", "Acme Voice Kit", "--set", "audio.mic_ws=10", "--set", "display.height=32", "--yes")
    board_file = project / "boards" / "acme" / "voice-kit.yaml"
    assert board_file.read_text(encoding="utf-8").startswith("# yaml-language-server: $schema=../board.schema.json")

    # 2. Check, 3. generate into the firmware checkout.
    xz("boards", "check", "boards/acme/voice-kit.yaml")
    xz("boards", "check")
    xz("generate", "--firmware", str(firmware))
    board_src = firmware / "main" / "boards" / "acme" / "voice-kit"
    assert {"config.h", "config.json", "voice_kit_board.cc"} <= {p.name for p in board_src.iterdir()}
    assert "CONFIG_BOARD_TYPE_ACME_VOICE_KIT" in (firmware / "main" / "CMakeLists.txt").read_text(encoding="utf-8")

    # 4. matrix select: the board file is untracked, and still selected.
    selection = json.loads(xz("matrix", "select", "--base", "HEAD", "--firmware", str(firmware), "--json"))
    assert [v["full_name"] for v in selection["variants"]] == [VARIANT], selection
    assert selection["variants"][0]["why"] == ["boards/acme/voice-kit.yaml: board definition changed"]

    # 5. assets build, 6. point the variant at the bundle (upstream's FLASH_CUSTOM_ASSETS), regenerate.
    xz("assets", "build", VARIANT, "--out", "assets")
    bundle = project / "assets" / VARIANT / "assets.bin"
    text = board_file.read_text(encoding="utf-8").replace(
        "  sdkconfig: {}\n",
        f"  sdkconfig:\n    FLASH_CUSTOM_ASSETS: y\n    CUSTOM_ASSETS_FILE: '\"{bundle}\"'\n")
    board_file.write_text(text, encoding="utf-8")
    xz("boards", "check")
    xz("generate", "--firmware", str(firmware))

    # 7. matrix build with the stand-in for idf.py (`--idf standin`, as the guide says).
    xz("matrix", "build", VARIANT, "--idf", "standin", "--relative-urls", "--firmware", str(firmware),
       "--idf-version", "6.0.2", "--out", "dist", "--cache-dir", "cache")
    build = project / "dist" / VARIANT
    args = json.loads((build / "flasher_args.json").read_text(encoding="utf-8"))
    offset = next(int(k, 16) for k, v in args["flash_files"].items() if v == "assets.bin")
    merged = (build / "merged-binary.bin").read_bytes()
    assert merged[offset:offset + bundle.stat().st_size] == bundle.read_bytes()

    # 8. The bundle on a virtual board: esptool writes the build's images, read back from the assets offset.
    from hil.lab.virtual import VirtualSpec, spawn

    board = spawn(VirtualSpec("guide", chip="esp32s3", flash="16MB"))
    try:
        files = [x for off, path in sorted(args["flash_files"].items(), key=lambda kv: int(kv[0], 16))
                 for x in (off, str(build / path))]
        proc = subprocess.run([sys.executable, "-m", "hil.vboard.esptool_fast", "--port", board.url, "--baud",
                               "921600", "write-flash", *files], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        size = bundle.stat().st_size
        assert bytes(board.board.flash.data[offset:offset + size]) == bundle.read_bytes()
    finally:
        board.close()

    # 9. The HIL suite on a virtual board flashed with this build.
    out = xz("hil", "run", "--virtual", "1", "--dist", "dist", "--out", "hil-out")
    assert "PASSED" in out and VARIANT in out, out
