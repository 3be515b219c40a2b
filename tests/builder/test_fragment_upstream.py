"""sdkconfig fragments equal upstream scripts/build.py's for every variant.

Oracle: upstream's own ``scripts/build.py`` (48142026), imported from the ``upstream_at_pin`` tree (the
bundle clone, or ``$XZBUILD_UPSTREAM``) and called on its own ``config.json`` files.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from xzbuild.model import BoardSet, load_boards
from xzbuild.sdkconfig import variant_fragment, wake_word_options

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def board_set() -> BoardSet:
    return load_boards(REPO / "boards")


@pytest.fixture(scope="module")
def up_root(upstream_at_pin: Path) -> Path:
    return upstream_at_pin


@pytest.fixture(scope="module")
def build_py(up_root: Path) -> Any:
    """Upstream's scripts/build.py as a module."""
    cwd = os.getcwd()
    try:  # build.py chdirs to its project root on import and reads paths relative to it
        spec = importlib.util.spec_from_file_location("upstream_build", up_root / "scripts" / "build.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        os.chdir(cwd)


def upstream_fragment(up: ModuleType, board: str, name: str, options: dict[str, object] | None) -> list[str]:
    """The lines build_board() writes to xiaozhi-build.sdkconfig.defaults (configure/build steps skipped)."""
    root = Path(up.__file__).resolve().parents[1]
    os.chdir(root)
    cfg = json.loads((root / "main" / "boards" / board / "config.json").read_text())
    build = next(b for b in cfg["builds"] if b["name"] == name)
    append = build.get("sdkconfig_append", [])
    explicit = up._extract_board_config_from_sdkconfig_append(append)
    with contextlib.redirect_stdout(io.StringIO()):
        resolved = up._resolve_board_config(board, cfg["target"], append, variant_name=name)
    lines = list(append) if explicit == resolved else [f"{resolved}=y"] + [
        i for i in append if i.strip() != f"{explicit}=y"]
    user: list[str] = []
    if options is not None or "build_options" in build:
        defs = up._build_option_definitions(board, cfg["target"], resolved, build)
        selected = up._normalize_build_options(defs, options or {})
        user += up._build_options_sdkconfig(defs, selected, up._sdkconfig_assignments(append))
    return list(up._apply_auto_selects(up._merge_sdkconfig_options(lines, user)))


def test_every_variant_fragment_equals_upstream(board_set: BoardSet, build_py: Any) -> None:
    """Oracle: build.py's own fragment for each of the 177 variants of its config.json files."""
    compared = 0
    for v in board_set.variants():
        if not v.board.has_config_json:
            continue
        assert variant_fragment(v, board_set.firmware).lines == upstream_fragment(build_py, v.board.dir, v.name,
                                                                                  None), v.full_name
        compared += 1
    assert compared == 177


@pytest.mark.parametrize("name, options", [
    ("bread-compact-wifi-lcd", {"wifi_provisioning": "blufi", "display_style": "wechat"}),
    ("esp-box-3", {"display_style": "emote"}),
    ("lichuang-dev", {"aec_mode": "off", "wifi_provisioning": "blufi"}),
])
def test_requested_build_options_equal_upstream(board_set: BoardSet, build_py: Any, name: str,
                                                options: dict[str, object]) -> None:
    """Oracle: build.py's fragment for the same --build-option values."""
    v = board_set.variant(name)
    mine = variant_fragment(v, board_set.firmware, build_options=options)
    assert mine.lines == upstream_fragment(build_py, v.board.dir, v.name, options)
    if options.get("wifi_provisioning") == "blufi":
        assert "CONFIG_BT_BLE_BLUFI_ENABLE=y" in mine.lines  # the auto-select


@pytest.mark.parametrize("word, target", [("nihaoxiaozhi", "esp32s3"), ("nihaoxiaozhi", "esp32c3"),
                                          ("disabled", "esp32"), ("wn9s_hilexin", "esp32c6")])
def test_wake_word_options_equal_upstream(board_set: BoardSet, build_py: Any, up_root: Path, word: str,
                                          target: str) -> None:
    """Oracle: build.py's _wake_word_sdkconfig_options."""
    os.chdir(up_root)
    _, options, symbols = build_py._wake_word_sdkconfig_options(word, target)
    assert wake_word_options(word, target, board_set.firmware) == (options, symbols)
