"""Factory for a minimal firmware checkout the idf.py stand-in can build (no upstream files copied)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STANDIN_DIR = REPO / "tests" / "standin"

# The layering facts the stand-in needs: flash size and partition table per target (spec §7, §13).
DEFAULT_LAYERS: dict[str, dict[str, str]] = {
    "base": {
        "CONFIG_ESPTOOLPY_FLASHSIZE_16MB": "y",
        "CONFIG_PARTITION_TABLE_CUSTOM": "y",
        "CONFIG_PARTITION_TABLE_CUSTOM_FILENAME": '"partitions/v2/16m.csv"',
        "CONFIG_PARTITION_TABLE_OFFSET": "0x8000",
    },
    "esp32": {"CONFIG_ESPTOOLPY_FLASHSIZE_4MB": "y",
              "CONFIG_PARTITION_TABLE_CUSTOM_FILENAME": '"partitions/v2/4m.csv"'},
    "esp32c3": {"CONFIG_PARTITION_TABLE_CUSTOM_FILENAME": '"partitions/v2/16m_c3.csv"'},
    "esp32c6": {"CONFIG_PARTITION_TABLE_CUSTOM_FILENAME": '"partitions/v2/16m_c3.csv"',
                "CONFIG_ESPTOOLPY_FLASHMODE_QIO": "y"},
    "esp32s3": {"CONFIG_ESPTOOLPY_FLASHMODE_QIO": "y", "CONFIG_SPIRAM": "y"},
}


def make_firmware(root: Path, layers: dict[str, dict[str, str]] | None = None, version: str = "2.4.2") -> Path:
    """Write CMakeLists.txt, sdkconfig.defaults[.<target>] and partitions/ (from boards/partitions)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "CMakeLists.txt").write_text(
        f'cmake_minimum_required(VERSION 3.16)\nset(PROJECT_VER "{version}")\nproject(xiaozhi)\n')
    for layer, values in (layers or DEFAULT_LAYERS).items():
        name = "sdkconfig.defaults" if layer == "base" else f"sdkconfig.defaults.{layer}"
        (root / name).write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    shutil.copytree(REPO / "boards" / "partitions", root / "partitions", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.md"))
    return root


def standin_env(log: Path, **knobs: str) -> dict[str, str]:
    """Environment with the stand-in first on PATH (and this interpreter's bin next, so no re-exec)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XZ_STANDIN_")}
    env["PATH"] = os.pathsep.join([str(STANDIN_DIR), str(Path(sys.executable).parent), env.get("PATH", "")])
    env["XZ_STANDIN_LOG"] = str(log)
    env.update(knobs)
    return env
