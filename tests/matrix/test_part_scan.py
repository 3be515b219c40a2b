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
    (r"x\.y\\z", "x.y\\z"),  # an escaped punctuation character is itself
    (r"ab\x41cd\u0041efg", "efg"),  # the digits of \x41, \u0041 are not literals
    (r"(x)ab\101cde\1", "cde"),  # an octal escape or a backreference ends the run, digits and all
    (r"\N{DIGIT ONE}23", "23"),
    (r"tab\there", "tab\there"),  # \t is the one character
    (r"[]a|]bc", "bc"),  # a class, even with ] and | inside, is not a literal (nor an alternation)
    (r"(a|b)cd(?:e[)]f)+", "cd"),  # a group is skipped whole, its alternation is its own
    (r"abc{2}de", "ab"),  # a counted repeat takes its character out
    (r"ab{1,}?cd", "cd"),
    (r"a{bc", "a{bc"),  # `{` that is no repeat is a literal
    (r"^ab.$", "ab"),
    (r"(?x) a b c", None),  # verbose: spaces are not literals
    (r"\bfoo(?=bar)baz", "foo"),
]


@pytest.mark.parametrize(("pattern", "literal"), LITERALS)
def test_required_literal(pattern: str, literal: str | None) -> None:
    assert required_literal(re.compile(pattern)) == literal


_PATTERNS = [p for p, _ in LITERALS] + [r.pattern for part in load_path_map().parts for r in part.used_by]
_WORDS = ["Es8311AudioCodec", "LcdDisplay", "lcd_display.h", "Foo", "Bar", "BUTTON", "Button", "_", " ", "\n",
          "ab", "bcd", "x", "9", "NoAudioCodecX", "SpiLcdDisplay"]


# Pieces of regexes the reader must not misread: repeats, classes, groups, escapes of every kind. (Anchors,
# `\b` and lookarounds are in the table above: at random they mostly make patterns nothing matches.)
_PIECES = ["a", "b", "c", "ab", "abc", "\\.", "\\\\", "\\n", "\\w", "\\d", "\\x61", "\\141", ".", "[ab]", "[^a]",
           "[]a]", "(ab|c)", "(?:b)", "(a)\\1", "*", "+", "?", "{2}", "{1,3}", "{,2}", "*?", "{"]


def _compiles(text: str) -> bool:
    try:
        re.compile(text)
    except re.error:
        return False
    return True


# A regex from the pieces, with a top-level `|` now and then.
_REGEXES = st.builds(lambda pieces, tail: "".join(pieces) + tail,
                     st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8),
                     st.sampled_from(["", "", "", "|a", "|bc"])).filter(_compiles)


@settings(max_examples=300, deadline=None)
@given(pattern=_REGEXES, data=st.data())
def test_required_literal_is_in_every_match(pattern: str, data: st.DataObject) -> None:
    literal = required_literal(re.compile(pattern))
    for _ in range(5):
        match = data.draw(st.from_regex(pattern, fullmatch=True))
        assert literal is None or literal in match, (pattern, literal, match)


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
