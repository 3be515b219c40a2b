"""Display size from the board model (config.h macros under the variant's sdkconfig)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assets_gen.display import display_size
from xzbuild.model import load_boards


@pytest.fixture(scope="module")
def board_set(repo_root: Path):  # type: ignore[no-untyped-def]
    return load_boards(repo_root / "boards")


@pytest.mark.parametrize(
    ("variant", "size"),
    [
        ("bread-compact-wifi-lcd", (240, 320)),       # chosen by #ifdef CONFIG_LCD_ST7789_240X320
        ("bread-compact-wifi-128x64", (128, 64)),
        ("bread-compact-esp32-lcd", (240, 240)),
        ("bread-compact-esp32", None),                # no display macros resolved
    ],
)
def test_display_size(board_set, variant: str, size: tuple[int, int] | None) -> None:  # type: ignore[no-untyped-def]
    assert display_size(board_set.variant(variant)) == size
