"""Stand-in releases for the site tests: `xzbuild matrix build` over the real boards/ with tests/standin/idf.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.builder.firmware import REPO, standin_env, write_skeleton

NPM = REPO / ".venv" / "npm" / "node_modules"
WEB_TOOLS = NPM / "esp-web-tools"

# Every chip family the small release needs to show: S3 (two variants of one board), ESP32 (4 MB), C6, and a
# P4/P4X pair of one board.
SMALL = ["bread-compact-wifi", "bread-compact-wifi-128x64", "bread-compact-esp32",
         "waveshare-esp32-c6-touch-amoled-2.06", "espressif-esp32-p4-function-ev-board",
         "espressif-esp32-p4x-function-ev-board"]


def build_release(root: Path, variants: list[str] | None = None, jobs: int = 2, **knobs: str) -> Path:
    """Build ``variants`` (all at IDF 6.0.2 when None) into ``root/dist``; returns the dist dir (``knobs``:
    stand-in settings such as ``XZ_STANDIN_ASSETS="0"``)."""
    firmware = write_skeleton(root / "firmware")
    dist = root / "dist"
    # The whole matrix is built with --keep-going: a stand-in that resolves sdkconfig against the firmware's
    # Kconfig refuses the variants whose fragment lines that Kconfig drops, and the release is the rest.
    names = variants if variants is not None else ["--all", "--keep-going"]
    env = standin_env(root / "standin.jsonl", **knobs)
    proc = subprocess.run([sys.executable, "-m", "xzbuild.cli.main", "matrix", "build", *names, "--jobs", str(jobs),
                           "--firmware", str(firmware), "--idf-version", "6.0.2", "--out", str(dist),
                           "--cache-dir", str(root / "cache"), "--boards", str(REPO / "boards"),
                           "--base-url", "https://firmware.example/xiaozhi"],  # ota.json wants an absolute URL
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    if variants is None and proc.returncode == 1 and (dist / "results.jsonl").is_file():
        return dist
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dist


def site_args(dist: Path, out: Path, *extra: str) -> list[str]:
    """`release site` arguments for a stand-in release (the repository's boards, the Makefile's npm dir)."""
    return ["release", "site", "--dist", str(dist), "-o", str(out), "--boards", str(REPO / "boards"),
            "--web-tools", str(WEB_TOOLS), "--date", "2026-12-01", *extra]
