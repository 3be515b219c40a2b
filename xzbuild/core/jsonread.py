"""The one JSON / JSON-lines reader for files that come from elsewhere (results, release dirs, bundles).

Result files and release directories are copied between machines, so they are read as untrusted: nesting is
bounded *before* parsing (Python's parser would otherwise raise ``RecursionError`` deep in C code), the
non-standard ``NaN``/``Infinity`` literals and numbers that overflow to infinity are refused, and every
problem is a one-line ``UserError`` at ``file:line`` (the line of a JSON-lines record, or of the syntax
error in a JSON document). Callers then check types with :func:`expect`. The bounds are in docs/limits.md.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from xzbuild.core.errors import Location, UserError

MAX_DEPTH = 64  # the deepest record xzbuild writes nests 4 levels; cJSON's own limit is 1000
MAX_LINE = 1 << 20  # bytes per JSON-lines record (a build record is ~1 KB)
MAX_FILE = 64 << 20  # bytes per JSON / JSON-lines file

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(r"[^\[\]{}]+")


class JsonProblem(ValueError):
    """What is wrong with one JSON text, and the line (1-based, within that text) where it shows."""

    def __init__(self, message: str, line: int = 1, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def _reject_constant(name: str) -> Any:
    raise JsonProblem(f"{name} is not a JSON number (JSON has no NaN or Infinity); write a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonProblem(f"number {text[:40]} is out of range (overflows to infinity); write a finite number")
    return value


_NUMBERISH = re.compile(r"-?(?:NaN|Infinity)|-?\d+(?:\.\d+)?[eE][+-]?\d{3,}")


def _where_number(text: str) -> tuple[int, int]:
    """(line, column) of the first NaN/Infinity or huge-exponent number outside strings (1, 0 if none)."""
    blanked = _STRINGS.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)
    found = _NUMBERISH.search(blanked)
    if found is None:
        return 1, 0
    line = blanked.count("\n", 0, found.start()) + 1
    return line, found.start() - (blanked.rfind("\n", 0, found.start()) + 1) + 1


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays/objects in ``text`` (brackets inside strings do not count)."""
    depth = deepest = 0
    for ch in _BRACKETS.sub("", _STRINGS.sub("", text)):
        depth += 1 if ch in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def loads(text: str, *, max_depth: int = MAX_DEPTH,
          object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """Parse one JSON text under the bounds; raises :class:`JsonProblem` (message + line)."""
    if nesting_depth(text) > max_depth:
        raise JsonProblem(f"nests deeper than {max_depth} levels (the bound for JSON xzbuild reads)")
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float,
                          object_pairs_hook=object_pairs_hook)
    except JsonProblem as exc:
        raise JsonProblem(exc.message, *_where_number(text)) from None
    except json.JSONDecodeError as exc:
        raise JsonProblem(f"not JSON ({exc.msg})", exc.lineno, exc.colno) from None
    except (ValueError, RecursionError) as exc:  # int() of a 5,000-digit number, or a nesting missed above
        raise JsonProblem(f"not JSON ({str(exc)[:120]})") from None


def _read_text(path: Path, limit: int) -> str:
    from xzbuild.core.fsutil import read_user_text

    try:
        size = path.stat().st_size
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", Location(str(path))) from None
    if size > limit:
        raise UserError(f"file is larger than {limit >> 20} MiB (the bound for JSON xzbuild reads)",
                        Location(str(path), 1))
    try:
        return read_user_text(path)
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", Location(str(path))) from None


def read_json(path: str | os.PathLike[str], hint: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """A JSON file; any problem is ``file:line: what; hint``."""
    p = Path(path)
    try:
        return loads(_read_text(p, MAX_FILE), max_depth=max_depth)
    except JsonProblem as exc:
        raise UserError(f"{exc.message}; {hint}", Location(str(p), exc.line, exc.column)) from None


def parse_json_text(text: str, where: Location, hint: str) -> Any:
    """One JSON text already in memory (``where`` is the line it came from)."""
    try:
        return loads(text)
    except JsonProblem as exc:
        raise UserError(f"{exc.message}; {hint}", Location(where.path, where.line, exc.column)) from None


def read_jsonl(path: str | os.PathLike[str], hint: str) -> Iterator[tuple[Location, Any]]:
    """(``file:line``, value) for each non-blank line of a JSON-lines file."""
    p = Path(path)
    for number, line in enumerate(_read_text(p, MAX_FILE).splitlines(), 1):
        if not line.strip():
            continue
        where = Location(str(p), number)
        if len(line) > MAX_LINE:
            raise UserError(f"line is longer than {MAX_LINE >> 10} KiB (the bound for one JSON-lines record); "
                            f"{hint}", where)
        yield where, parse_json_text(line, where, hint)


_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
               dict: "an object", type(None): "null"}


def expect(value: Any, kinds: type | tuple[type, ...], what: str, where: Location) -> Any:
    """``value`` if it is one of ``kinds`` (bool is never an int or a number here), else a ``UserError``."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if not ok:
        wanted = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        shown = json.dumps(value, ensure_ascii=True)
        raise UserError(f"{what}: expected {wanted}, got {shown[:60]}{'…' if len(shown) > 60 else ''}", where)
    return value
