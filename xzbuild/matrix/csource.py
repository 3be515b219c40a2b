"""C/C++ source comparison that ignores comments and layout inside a line.

A change that only edits comments, blank lines or spacing cannot change an image, so selection skips it.
Line breaks stay significant (a preprocessor directive ends at the newline), and string/character literals
are kept verbatim (`"https://..."` is not a comment).
"""

from __future__ import annotations

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")


def code_lines(text: str) -> list[str]:
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
        normalized = _collapse(line)
        if normalized:
            lines.append(normalized)
    return lines


def _collapse(line: str) -> str:
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


def same_code(old: str, new: str) -> bool:
    """True if two C/C++ texts differ only in comments, blank lines or spacing."""
    return code_lines(old) == code_lines(new)
