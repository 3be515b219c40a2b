"""C/C++ source comparison that ignores comments and layout inside a line.

A change that only edits comments, blank lines or spacing cannot change an image, so selection skips it.
Line breaks stay significant (a preprocessor directive ends at the newline), and string/character literals
are kept verbatim (`"https://..."` is not a comment).
"""

from __future__ import annotations

import re

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")


# One token per match, covering the whole text: a string or character literal (to its closing quote, the end of
# its line, or the end of the text; a backslash escapes the next character, a newline included), a line
# comment, a block comment (unterminated: to the end), a run of other characters, or a lone slash.
_TOKEN = re.compile(r"""
    "(?:\\[\s\S]|[^"\\\n])*(?:"|\n|\\?\Z)
  | '(?:\\[\s\S]|[^'\\\n])*(?:'|\n|\\?\Z)
  | //[^\n]*
  | /\*[\s\S]*?(?:\*/|\Z)
  | [^"'/]+
  | /
""", re.VERBOSE)
# Within one line: a run of spacing, a literal (to its closing quote or the end of the line), other characters.
_LINE_TOKEN = re.compile(r"""
    [ \t\r\f\v]+
  | "(?:\\.|[^"\\])*(?:"|\\?\Z)
  | '(?:\\.|[^'\\])*(?:'|\\?\Z)
  | [^ \t\r\f\v"']+
""", re.VERBOSE)


def code_lines(text: str) -> list[str]:
    """The non-empty lines of `text` with comments removed and runs of spaces collapsed (outside literals)."""
    pieces: list[str] = []
    for token in _TOKEN.findall(text):
        if token.startswith("//"):
            continue
        if token.startswith("/*"):
            pieces.append("\n" * token.count("\n") or " ")  # keeps line numbers; `a/**/b` stays two tokens
        else:
            pieces.append(token)
    lines: list[str] = []
    for line in "".join(pieces).split("\n"):
        # Outside literals only spacing can differ here; literals were copied verbatim above, and
        # collapsing spaces inside them would hide a real change, so compare them untouched.
        normalized = _collapse(line)
        if normalized:
            lines.append(normalized)
    return lines


def _collapse(line: str) -> str:
    out: list[str] = []
    space = False
    for token in _LINE_TOKEN.findall(line):
        if token[0] in " \t\r\f\v":
            space = True
            continue
        if space and out:
            out.append(" ")
        space = False
        out.append(token)
    return "".join(out)


def same_code(old: str, new: str) -> bool:
    """True if two C/C++ texts differ only in comments, blank lines or spacing."""
    return code_lines(old) == code_lines(new)
