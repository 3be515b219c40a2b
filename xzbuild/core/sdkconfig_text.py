"""The one reader and writer of sdkconfig text (``sdkconfig``, ``sdkconfig.defaults*``, defaults fragments).

The format is ESP-IDF's, as esp-idf-kconfig's loader (``esp_kconfiglib.Kconfig._load_config``) reads it and
its writer (``Symbol.config_string``) writes it:

- ``CONFIG_X=value``: trailing whitespace is ignored; for a value that does not start with ``"`` a trailing
  ``<whitespace>#...`` comment is dropped; the line must start with ``CONFIG_`` (an indented line is not an
  assignment).
- ``# CONFIG_X is not set``: ``X`` is ``n``.
- Strings are quoted, ``\\"`` and ``\\\\`` escaped (the loader turns any ``\\c`` into ``c``); numbers and hex
  values are written bare.
- Blank lines and other ``#`` comments carry nothing; a later assignment of a name wins over an earlier one.
- The lines between ``# Deprecated options for backward compatibility`` and ``# End of deprecated options``
  (old names ESP-IDF writes at the end of an ``sdkconfig``) are skipped, as the loader does by default.
- Any other line is malformed: the loader warns and skips it; :func:`read_lines` does the same unless
  ``strict``, which raises a ``file:line`` :class:`UserError`.

Without the Kconfig the reader cannot know a symbol's type, so it keeps each value as written
(:attr:`Assignment.raw`); :attr:`Assignment.value` is the value esp-idf-kconfig gives a symbol of the kind the
spelling shows (a quoted string unescaped, anything else as written).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from xzbuild.core.errors import UserError

PREFIX = "CONFIG_"
DEPRECATED_BEGIN = "# Deprecated options for backward compatibility"
DEPRECATED_END = "# End of deprecated options"

_SET = re.compile(r"CONFIG_([^=]+)=(.*)", re.ASCII)
_UNSET = re.compile(r"# CONFIG_([^ ]+) is not set", re.ASCII)
_STRING = re.compile(r'"((?:[^\\"]|\\.)*)"', re.ASCII)
_UNESCAPE = re.compile(r"\\(.)")
_INLINE_COMMENT = re.compile(r"\s+#")


@dataclass(frozen=True)
class Assignment:
    """One assignment line: ``name`` without ``CONFIG_``, the value as written (``n`` for ``is not set``),
    where it stands."""

    name: str
    raw: str
    line: int = 0
    source: str = "sdkconfig"
    unset: bool = False  # written as ``# CONFIG_X is not set``

    @property
    def key(self) -> str:
        """The name with its ``CONFIG_`` prefix."""
        return PREFIX + self.name

    @property
    def value(self) -> str:
        """The value esp-idf-kconfig loads: a quoted string unescaped, anything else as written."""
        return unquote(self.raw)

    @property
    def text(self) -> str:
        """The line again: ``# CONFIG_X is not set`` or ``CONFIG_X=<raw>``."""
        return f"# {self.key} is not set" if self.unset else f"{self.key}={self.raw}"

    @property
    def where(self) -> str:
        """``file:line`` of the assignment."""
        return f"{self.source}:{self.line}"


def unquote(raw: str) -> str:
    """``"a\\"b"`` → ``a"b``: the content of a leading quoted string with escapes undone, else ``raw``."""
    m = _STRING.match(raw)
    return _UNESCAPE.sub(r"\1", m.group(1)) if m else raw


def quote(text: str) -> str:
    """A string as sdkconfig (and ``sdkconfig.h``) spell it: quoted, ``\\`` and ``"`` escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def read_lines(lines: Iterable[str], source: str = "sdkconfig", *, strict: bool = False) -> list[Assignment]:
    """The assignments of ``lines`` in order (numbered from 1), as ESP-IDF's loader reads them.

    ``strict``: a malformed line (neither an assignment, nor blank, nor a ``#`` comment) is a
    ``source:line`` user error instead of being skipped."""
    out: list[Assignment] = []
    deprecated = False
    for number, text in enumerate(lines, 1):
        line = text.rstrip()
        stripped = line.strip()
        if stripped == DEPRECATED_BEGIN:
            deprecated = True
            continue
        if stripped == DEPRECATED_END:
            deprecated = False
            continue
        if deprecated:
            continue
        if (m := _SET.match(line)) is not None:
            raw = m.group(2)
            if not raw.startswith('"'):
                raw = _INLINE_COMMENT.split(raw, maxsplit=1)[0].rstrip()
            out.append(Assignment(m.group(1), raw, number, source))
        elif (m := _UNSET.match(line)) is not None:
            out.append(Assignment(m.group(1), "n", number, source, unset=True))
        elif strict and line and not line.lstrip().startswith("#"):
            raise UserError(f"{source}:{number}: invalid sdkconfig line {line!r}; expected CONFIG_NAME=value "
                            "or '# CONFIG_NAME is not set'")
    return out


def read_text(text: str, source: str = "sdkconfig", *, strict: bool = False) -> list[Assignment]:
    """:func:`read_lines` of a whole text."""
    return read_lines(text.splitlines(), source, strict=strict)


def read_file(path: Path, *, strict: bool = False) -> list[Assignment]:
    """:func:`read_lines` of a file (UTF-8); a missing file has no assignments."""
    if not path.is_file():
        return []
    return read_text(path.read_text(encoding="utf-8"), str(path), strict=strict)


def last_values(assignments: Iterable[Assignment], *, prefixed: bool = True) -> dict[str, str]:
    """Name → raw value, the later assignment of a name winning (a name keeps its first position);
    names with ``CONFIG_`` unless ``prefixed`` is False."""
    out: dict[str, str] = {}
    for a in assignments:
        out[a.key if prefixed else a.name] = a.raw
    return out


def values(lines: Iterable[str], source: str = "sdkconfig", *, strict: bool = False) -> dict[str, str]:
    """``CONFIG_X`` → raw value of ``lines``, the later assignment winning."""
    return last_values(read_lines(lines, source, strict=strict))


# ---- the writer ----

def format_line(name: str, value: str, kind: str) -> str:
    """One line as ESP-IDF writes a symbol of ``kind`` (``bool``, ``tristate``, ``string``, ``int``, ``hex``,
    ``float``) with the value ``value`` (esp-idf-kconfig's ``str_value``); ``name`` with or without
    ``CONFIG_``: ``CONFIG_X=y``, ``# CONFIG_X is not set``, ``CONFIG_X=0x10``, ``CONFIG_X="a\\"b"``."""
    key = PREFIX + name.removeprefix(PREFIX)
    if kind in ("bool", "tristate"):
        return f"# {key} is not set" if value == "n" else f"{key}={value}"
    if kind == "string":
        return f"{key}={quote(value)}"
    return f"{key}={value}"


def write_text(symbols: Iterable[tuple[str, str, str]], header: str | None = None) -> str:
    """sdkconfig text for ``(name, kind, value)`` triples, one line each in order (see :func:`format_line`),
    after an optional ``# header`` line; a trailing newline."""
    lines = [f"# {header}"] if header is not None else []
    lines += [format_line(name, value, kind) for name, kind, value in symbols]
    return "".join(line + "\n" for line in lines)
