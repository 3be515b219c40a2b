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


# A small cross-section of the real boards: every target, every partition layout, a P4/P4X pair and an
# S31 board (disabled at IDF 6.0.2). Tests copy these into a temporary boards/ directory.
SUBSET = [
    "bread-compact-wifi.yaml",  # esp32s3, 2 variants, 16 MB
    "bread-compact-esp32.yaml",  # esp32, 2 variants, 4 MB factory layout
    "espressif/esp32-p4-function-ev-board.yaml",  # esp32p4 p4 + p4x
    "espressif/esp32-s31-function-coreboard-1.yaml",  # esp32s31, needs IDF >= 6.1
    "waveshare/esp32-c6-touch-amoled-2.06.yaml",  # esp32c6, 16 MB C3/C6 layout
    "sensecap-watcher.yaml",  # esp32s3, 32 MB
    "lceda-course-examples/eda-super-bear.yaml",  # v1 table, no assets partition
    "espressif/esp-sensairshuttle.yaml",  # esp32c5
    "xmini/c3-v3.yaml",  # esp32c3
    "m5stack/atoms3-echo-base.yaml",  # esp32s3, 8 MB
]


def all_board_files() -> list[str]:
    """Every board file of the repository (relative to boards/)."""
    src = REPO / "boards"
    return sorted(p.relative_to(src).as_posix() for p in src.rglob("*.yaml") if not p.name.startswith("_"))


_UPSTREAM_CLONE: list[Path] = []


def upstream_tree() -> Path:
    """A pristine checkout of the pinned upstream firmware (cloned once per test process, upstream's own ids)."""
    if not _UPSTREAM_CLONE:
        import tempfile

        from tests.upstream_repo import clone_upstream

        dest = Path(tempfile.mkdtemp(prefix="xz-upstream-")) / "xiaozhi-esp32"
        clone_upstream(dest, keep_git=False)
        _UPSTREAM_CLONE.append(dest)
    return _UPSTREAM_CLONE[0]


def generated_firmware(out: Path, boards: Path) -> Path:
    """The upstream firmware with ``xzbuild generate`` run for ``boards`` (what a release builds from)."""
    from xzbuild.codegen import writer
    from xzbuild.codegen.generated_files import build_plan
    from xzbuild.model import load_boards

    shutil.copytree(upstream_tree(), out, symlinks=True)
    writer.write_changed(build_plan(load_boards(boards), out, None).files, out)
    return out


def copy_boards(dst: Path, boards: list[str] | None = None) -> Path:
    """``boards/_firmware.yaml`` plus the named board files (default: SUBSET) under ``dst``."""
    src = REPO / "boards"
    dst.mkdir(parents=True)
    for name in ["_firmware.yaml", *(boards or SUBSET)]:
        (dst / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / name, dst / name)
    return dst


def make_project(root: Path, boards: list[str] | None = None) -> tuple[Path, Path]:
    """(boards dir, firmware dir) under ``root``: a board subset and the upstream firmware generated from it."""
    dst = copy_boards(root / "boards", boards)
    return dst, generated_firmware(root / "firmware", dst)


_NOTE = 'generated by "xzbuild generate" from boards/*.yaml; do not edit'
_TYPES = {"y": "bool", "n": "bool"}


def _skeleton_kconfig(board_set: object) -> str:
    """A minimal main/Kconfig.projbuild: the board choice and display choices (filled by generate), the
    locales, and a plain declaration of every other firmware option a variant's sdkconfig sets.

    Only for trees without upstream (``make demo``): it has none of upstream's dependencies, so the
    checks that need real Kconfig semantics run on the upstream tree (``make_project``)."""
    import re

    from tests.standin.kconfig import COMPONENT_NAMESPACES

    facts = board_set.firmware  # type: ignore[attr-defined]
    out = ['menu "Xiaozhi Assistant"\n', 'choice BOARD_TYPE\n    prompt "Target Board"\n',
           f"    # BEGIN xzbuild board-type-defaults: {_NOTE}\n    # END xzbuild board-type-defaults\n",
           f"    # BEGIN xzbuild board-types: {_NOTE}\n    # END xzbuild board-types\n", "endchoice\n"]
    declared = set()
    for model in facts.display_models.values():
        out.append(f"choice {model.name}\n    depends on BOARD_TYPE_PLACEHOLDER\n    prompt \"{model.name}\"\n"
                   f"    default {model.default}\n")
        out += [f'    config {sym}\n        bool "{label}"\n' for sym, label in model.entries]
        out.append("endchoice\n")
        declared |= {sym for sym, _ in model.entries}
    if facts.locales:
        out.append('choice LANGUAGE\n    prompt "Language"\n'
                   + "".join(f'    config {sym}\n        bool "{d}"\n' for sym, d in facts.locales) + "endchoice\n")
        declared |= {sym for sym, _ in facts.locales}
    options: dict[str, str] = {}
    for variant in board_set.variants():  # type: ignore[attr-defined]
        for line in variant.sdkconfig_append:
            m = re.match(r"^CONFIG_([A-Za-z0-9_]+)=(.*)$", line.strip())
            if m and not m.group(1).startswith(("BOARD_TYPE_", *COMPONENT_NAMESPACES)):
                options.setdefault(m.group(1), m.group(2))
    for name, value in sorted(options.items()):
        if name not in declared:
            kind = _TYPES.get(value, "string" if value.startswith('"') else "int" if value.isdigit() else "string")
            out.append(f'config {name}\n    {kind} "{name}"\n')
    return "".join(out) + "endmenu\n"


_MAIN_CMAKE = f"""set(MAIN_PRIV_REQUIRES_EXTRA "")
# BEGIN xzbuild board-components: {_NOTE}
# END xzbuild board-components
# BEGIN xzbuild board-table: {_NOTE}
# END xzbuild board-table
# upstream's rule: the top-level sources of the board dir are compiled
file(GLOB BOARD_SOURCES ${{CMAKE_CURRENT_SOURCE_DIR}}/boards/${{BOARD_DIR}}/*.cc ${{CMAKE_CURRENT_SOURCE_DIR}}/boards/${{BOARD_DIR}}/*.c)
idf_component_register(SRCS main.cc ${{BOARD_SOURCES}} PRIV_REQUIRES ${{MAIN_PRIV_REQUIRES_EXTRA}})
"""
# The font and emoji components the skeleton's board table names (upstream's pins at 48142026).
_COMPONENTS = """dependencies:
  78/xiaozhi-fonts: ~2.0.0
  txp666/otto-emoji-gif-component: ^1.3.0
"""


def write_skeleton(out: Path, boards: Path = REPO / "boards") -> Path:
    """A firmware skeleton for the stand-in from a boards/ directory's facts (``make demo`` uses it), with
    ``xzbuild generate`` run over it, so every board passes the pre-build identity checks."""
    from xzbuild.codegen import writer
    from xzbuild.codegen.generated_files import build_plan
    from xzbuild.model import load_boards

    board_set = load_boards(boards)
    facts = board_set.firmware
    layers = {layer: {(k if k.startswith("CONFIG_") else f"CONFIG_{k}"): v for k, v in values.items()}
              for layer, values in facts.sdkconfig_defaults.items()}
    make_firmware(out, layers, version=facts.project_ver or "2.4.2")
    (out / "main").mkdir(exist_ok=True)
    (out / "main" / "Kconfig.projbuild").write_text(_skeleton_kconfig(board_set), encoding="utf-8")
    (out / "main" / "CMakeLists.txt").write_text(_MAIN_CMAKE, encoding="utf-8")
    (out / "main" / "idf_component.yml").write_text(_COMPONENTS, encoding="utf-8")
    for board in board_set.boards:
        if board.sources == "custom":  # generate requires hand-written sources to exist; a placeholder
            leaf = out / "main" / "boards" / board.dir
            leaf.mkdir(parents=True, exist_ok=True)
            (leaf / "board.cc").write_text("// firmware skeleton for the idf.py stand-in: no board code\n")
    writer.write_changed(build_plan(board_set, out, None).files, out)
    return out


if __name__ == "__main__":
    # python -m tests.builder.firmware OUT_DIR [BOARDS_DIR]
    print(write_skeleton(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else REPO / "boards"))
