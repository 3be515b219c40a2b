"""The idf.py stand-in runs the firmware's real main/CMakeLists.txt (issue 37 item 5) and fails where the real
build would: no board source compiled, a board dir that does not exist, a font or emoji collection the tree's
pinned components do not provide. Each refusal is shown on upstream's tree at the pin with one realistic edit;
the pristine pin is accepted, and what CMake selected is written next to the build.

Expected values come from upstream's tree: the board dir's own ``*.cc``/``*.c`` files (the glob upstream's
CMake does), the fonts its chain branch sets, the partition table its defaults name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.importer.conftest import export_tree

STANDIN = Path(__file__).resolve().parents[1] / "standin" / "idf.py"
# (BOARD_NAME, target, board symbol, board dir at the pin, text font its chain branch sets)
ACCEPTED = [
    ("bread-compact-wifi", "esp32s3", "BREAD_COMPACT_WIFI", "bread-compact-wifi", "font_noto_sans_basic_14_1"),
    ("xmini-c3-v3", "esp32c3", "XMINI_C3_V3", "xmini/c3-v3", "font_noto_sans_basic_14_1"),
    ("m5stack-stick-s3", "esp32s3", "M5STACK_STICK_S3", "m5stack/stick-s3", "font_noto_sans_basic_16_4"),
]


@pytest.fixture(scope="module")
def pin_tree(upstream_history: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_tree(upstream_history, "HEAD", tmp_path_factory.mktemp("pin") / "tree")


def _tree(pin_tree: Path, tmp_path: Path, edits: list[tuple[str, str, str]]) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(pin_tree, tree, symlinks=True)
    for rel, old, new in edits:
        path = tree / rel
        text = path.read_text(encoding="utf-8")
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return tree


def _build(tree: Path, build: Path, name: str, target: str, symbol: str) -> subprocess.CompletedProcess[str]:
    build.mkdir(parents=True)
    fragment = build / "xzbuild.sdkconfig.defaults"
    fragment.write_text(f"CONFIG_BOARD_TYPE_{symbol}=y\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("XZ_STANDIN_")}
    env["XZ_STANDIN_ASSETS"] = "0"
    return subprocess.run([sys.executable, str(STANDIN), "-C", str(tree), "-B", str(build),
                           f"-DSDKCONFIG={build / 'sdkconfig'}", f"-DSDKCONFIG_DEFAULTS=sdkconfig.defaults;{fragment}",
                           f"-DIDF_TARGET={target}", f"-DBOARD_NAME={name}", "build"],
                          capture_output=True, text=True, env=env, check=False, timeout=120)


@pytest.mark.parametrize("name,target,symbol,board_dir,font", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_pin_accepted_and_selection_written(pin_tree: Path, tmp_path: Path, name: str, target: str, symbol: str,
                                            board_dir: str, font: str) -> None:
    proc = _build(pin_tree, tmp_path / "build", name, target, symbol)
    assert proc.returncode == 0, proc.stderr
    selected = json.loads((tmp_path / "build" / "xzbuild-cmake.json").read_text(encoding="utf-8"))
    own = sorted(f"boards/{board_dir}/{p.name}" for p in (pin_tree / "main" / "boards" / board_dir).iterdir()
                 if p.suffix in (".cc", ".c"))
    assert sorted(selected["board_sources"]) == own
    assert selected["board_dir"] == board_dir and selected["text_font"] == font
    assert f'BOARD_NAME="{name}"' in selected["compile_definitions"]
    assert selected["partition_table"].endswith("partitions/v2/16m_c3.csv" if target == "esp32c3"
                                                 else "partitions/v2/16m.csv")
    assert "boards/common/board.cc" in selected["sources"]


REFUSED = {
    # An older tree's glob (boards/${BOARD_TYPE}/*.cc) under today's BOARD_DIR chain: nothing of the board is built.
    "no-board-source": ([("main/CMakeLists.txt", "${CMAKE_CURRENT_SOURCE_DIR}/boards/${BOARD_DIR}/*.cc\n"
                          "    ${CMAKE_CURRENT_SOURCE_DIR}/boards/${BOARD_DIR}/*.c",
                          "${CMAKE_CURRENT_SOURCE_DIR}/boards/${BOARD_TYPE}/*.cc\n"
                          "    ${CMAKE_CURRENT_SOURCE_DIR}/boards/${BOARD_TYPE}/*.c")],
                        ACCEPTED[1], "compiles no board source"),
    "board-dir-missing": ([("main/CMakeLists.txt", 'set(BOARD_DIR "bread-compact-wifi")',
                            'set(BOARD_DIR "bread-compact-wifi-v2")')],
                          ACCEPTED[0], "main/boards/bread-compact-wifi-v2 (BOARD_DIR), which does not exist"),
    # Today's font names in a tree pinning the xiaozhi-fonts of 2025-12 (font_puhui_* names).
    "font-not-pinned": ([("main/idf_component.yml", "78/xiaozhi-fonts: ~2.0.0", "78/xiaozhi-fonts: ~1.5.5")],
                        ACCEPTED[0], "text font font_noto_sans_basic_14_1, which the tree's pinned components"),
    "emoji-not-provided": ([("main/CMakeLists.txt", "    set(BOARD_DIR \"m5stack/stick-s3\")\n"
                             "    set(BUILTIN_TEXT_FONT font_noto_sans_basic_16_4)\n"
                             "    set(BUILTIN_ICON_FONT font_material_symbols_16_4)\n"
                             "    set(DEFAULT_EMOJI_COLLECTION noto-color-emoji_64)",
                             "    set(BOARD_DIR \"m5stack/stick-s3\")\n"
                             "    set(BUILTIN_TEXT_FONT font_noto_sans_basic_16_4)\n"
                             "    set(BUILTIN_ICON_FONT font_material_symbols_16_4)\n"
                             "    set(DEFAULT_EMOJI_COLLECTION twemoji_64)")],
                           ACCEPTED[2], "emoji collection twemoji_64, which the tree's pinned components"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_where_the_real_build_fails(pin_tree: Path, tmp_path: Path, case: str) -> None:
    edits, (name, target, symbol, _dir, _font), message = REFUSED[case]
    proc = _build(_tree(pin_tree, tmp_path, edits), tmp_path / "build", name, target, symbol)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("CMake Error") and message in last, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "build" / f"{'xiaozhi'}.bin").exists()


@pytest.mark.slow
def test_every_variant_at_the_pin_accepted(pin_tree: Path, tmp_path: Path, repo_root: Path) -> None:
    """Every variant of boards/ (IDF 6.0.2) through the stand-in on the pristine pin: none is refused."""
    from xzbuild.model import load_boards
    from xzbuild.sdkconfig.fragment import board_lines

    refused = []
    for i, v in enumerate(load_boards(repo_root / "boards").variants()):
        if not v.supports_idf("6.0.2") or v.kconfig is None:
            continue
        build = tmp_path / f"b{i}"
        build.mkdir()
        (build / "xzbuild.sdkconfig.defaults").write_text("\n".join(board_lines(v)[1]) + "\n", encoding="utf-8")
        proc = subprocess.run([sys.executable, str(STANDIN), "-C", str(pin_tree), "-B", str(build),
                               f"-DSDKCONFIG={build / 'sdkconfig'}",
                               f"-DSDKCONFIG_DEFAULTS=sdkconfig.defaults;{build / 'xzbuild.sdkconfig.defaults'}",
                               f"-DIDF_TARGET={v.target}", f"-DBOARD_NAME={v.name}", "build"],
                              capture_output=True, text=True, env={**os.environ, "XZ_STANDIN_ASSETS": "0"},
                              check=False)
        if "CMake Error" in proc.stderr:
            refused.append(f"{v.name}: {proc.stderr.strip().splitlines()[-1]}")
        shutil.rmtree(build)
    assert refused == []
