"""The C/C++ comment/spacing normaliser against a character-by-character statement of the same rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xzbuild.matrix.csource import code_lines, same_code


# The judge: the rules spelt out one character at a time (the first implementation, kept here as the
# reference; the product tokenises with regular expressions instead).
def _char_by_char_code_lines(text: str) -> list[str]:
    """The non-empty lines of `text` with comments removed and runs of spaces collapsed (outside literals)."""
    lines: list[str] = []
    current: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        ch = text[i]
        if quote is not None:
            current.append(ch)
            if ch == "\\" and i + 1 < n:
                current.append(text[i + 1])
                i += 2
                continue
            if ch == quote or ch == "\n":
                quote = None
            i += 1
            continue
        if ch in "\"'":
            quote = ch
            current.append(ch)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            comment = text[i:] if end < 0 else text[i:end + 2]
            current.append("\n" * comment.count("\n") or " ")
            i = n if end < 0 else end + 2
            continue
        else:
            current.append(ch)
        i += 1
    for line in "".join(current).split("\n"):
        # Outside literals only spacing can differ here; literals were copied verbatim above, and
        # collapsing spaces inside them would hide a real change, so compare them untouched.
        normalized = _char_by_char_collapse(line)
        if normalized:
            lines.append(normalized)
    return lines


def _char_by_char_collapse(line: str) -> str:
    out: list[str] = []
    quote: str | None = None
    space = False
    i = 0
    while i < len(line):
        ch = line[i]
        if quote is not None:
            out.append(ch)
            if ch == "\\" and i + 1 < len(line):
                out.append(line[i + 1])
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in " \t\r\f\v":
            space = True
        else:
            if space and out:
                out.append(" ")
            space = False
            if ch in "\"'":
                quote = ch
            out.append(ch)
        i += 1
    return "".join(out)



CASES = [
    ('int a; // note\nint b;', ["int a;", "int b;"]),
    ('x = "a // not a comment";', ['x = "a // not a comment";']),
    ("a/* one\ntwo */b", ["a", "b"]),
    ("a/**/b", ["a b"]),
    ("a /*/ still comment */ b", ["a b"]),
    ("s = 'x\\'y'; t", ["s = 'x\\'y'; t"]),
    ('"open\nnext  line', ['"open', "next line"]),
    ('"esc\\\nstill"  x', ['"esc\\', 'still"  x']),  # each line restarts: line 2 reopens a literal
    ("/* never closed\n\nx", []),
    ("  lead   and  trail  ", ["lead and trail"]),
    ('"  kept  "   y', ['"  kept  " y']),
    ("a\\", ["a\\"]),
    ('"\\', ['"\\']),
]


@pytest.mark.parametrize(("text", "lines"), CASES)
def test_code_lines_table(text: str, lines: list[str]) -> None:
    assert code_lines(text) == lines == _char_by_char_code_lines(text)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet='"\'/\\*\n \t\rab;#{}', max_size=60))
def test_regex_tokeniser_equals_the_character_rules(text: str) -> None:
    assert code_lines(text) == _char_by_char_code_lines(text)


def test_same_code_ignores_comments_and_spacing_only() -> None:
    assert same_code("int  a; /* x */\n", "int a;\n// y\n")
    assert not same_code('s = "a  b";', 's = "a b";')
