"""The part scan's substring shortcut answers exactly what the regex search answers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xzbuild.matrix.graph import PartUse, _found, load_path_map, required_literal

# (pattern, the text every match must contain, or None: no shortcut)
LITERALS = [
    (r"\bEs8311AudioCodec\b", "Es8311AudioCodec"),
    (r"\w*LcdDisplay\b", "LcdDisplay"),
    (r"lcd_display\.h", "lcd_display.h"),
    (r"\bNoAudioCodec\w*\b", "NoAudioCodec"),
    (r"ab+cd", "cd"),  # `b+` is not a literal: the longest literal run after it
    (r"Foo|Bar", None),  # top-level alternation: neither is required
    (r"(?i)button", None),  # case-insensitive
    (r"\d+", None),
]


@pytest.mark.parametrize(("pattern", "literal"), LITERALS)
def test_required_literal(pattern: str, literal: str | None) -> None:
    assert required_literal(re.compile(pattern)) == literal


_PATTERNS = [p for p, _ in LITERALS] + [r.pattern for part in load_path_map().parts for r in part.used_by]
_WORDS = ["Es8311AudioCodec", "LcdDisplay", "lcd_display.h", "Foo", "Bar", "BUTTON", "Button", "_", " ", "\n",
          "ab", "bcd", "x", "9", "NoAudioCodecX", "SpiLcdDisplay"]


@settings(max_examples=400, deadline=None)
@given(pattern=st.sampled_from(_PATTERNS), parts=st.lists(st.sampled_from(_WORDS), max_size=12))
def test_shortcut_equals_search(pattern: str, parts: list[str]) -> None:
    compiled = re.compile(pattern)
    text = "".join(parts)
    assert _found(compiled, text) == (compiled.search(text) is not None)


def test_part_use_is_the_eager_set() -> None:
    parts = load_path_map().parts
    text = '#include "es8311_audio_codec.h"\nclass B : public WifiBoard { SpiLcdDisplay d; Button b; };'
    use = PartUse(text, "esp32s3", parts)
    eager = {p.name for p in parts if p.used_by_board(text, "esp32s3")}
    assert set(use) == eager and len(use) == len(eager) and "codec/es8311" in use and "no/such-part" not in use
