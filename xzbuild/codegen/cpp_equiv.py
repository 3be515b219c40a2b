"""Preprocessor equivalence of two config.h files: ``gcc -E -dM`` with a variant's CONFIG_ symbols.

Headers a config.h includes from ESP-IDF (``<driver/gpio.h>`` ...) are replaced by empty stubs created on
demand, so only the board's own macros are compared. Equivalent means: every macro the reference
defines is defined by the candidate with the same parameter list and expansion, and both hit the same
``#error`` lines. Expansions are compared twice: *strictly* (token text, whitespace collapsed) and by
*value*, where redundant outer parentheses are dropped and integer constant expressions are evaluated
(``(40 * 1000 * 1000)`` equals ``40000000``, ``0x14`` equals ``20``); a macro that differs only in that
way is listed as *respelled*, not as different.
"""

from __future__ import annotations

import ast
import operator
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

_MISSING = re.compile(r"fatal error: ([^:\n]+): No such file or directory")
_ERROR = re.compile(r"error: #error (.*)")
_DEFINE = re.compile(r"^#define (\w+)(\([^)]*\))?(?: (.*))?$")
# Deliberately independent of xzbuild.parts.values (which spells the structured macros): the check must
# not share its notion of "same value" with the code whose output it judges.
_INT_EXPR = re.compile(r"^[0-9a-fA-FxX()+\-*/<> \t]+$")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.LShift: operator.lshift, ast.RShift: operator.rshift}


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _int_value(text: str) -> int | None:
    if not _INT_EXPR.match(text) or re.search(r"(?<![0-9xXa-fA-F])0[0-9]", text):  # no octal look-alikes
        return None
    try:
        tree = ast.parse(text.replace("/", "//"), mode="eval")
    except SyntaxError:
        return None

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return int(_OPS[type(node.op)](ev(node.left), ev(node.right)))
        raise ValueError(text)

    try:
        return ev(tree.body)
    except (ValueError, ZeroDivisionError, RecursionError):
        return None


def value_form(expansion: str) -> str:
    """An expansion reduced to its value: whitespace collapsed, outer parens dropped, integers evaluated."""
    text = " ".join(expansion.split())
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    value = _int_value(text)
    return str(value) if value is not None else text


@dataclass
class HeaderMacros:
    """Macros a header leaves defined (name -> params+expansion) and the ``#error`` texts it reached."""

    macros: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


@dataclass
class Equivalence:
    """Comparison result; ``ok`` when nothing is missing or different and the errors agree."""

    missing: list[str] = field(default_factory=list)
    different: list[tuple[str, str, str]] = field(default_factory=list)
    respelled: list[tuple[str, str, str]] = field(default_factory=list)
    errors: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))

    @property
    def ok(self) -> bool:
        """Every reference macro present with the same value, and the same ``#error`` lines."""
        return not self.missing and not self.different and self.errors[0] == self.errors[1]

    @property
    def strict(self) -> bool:
        """:attr:`ok`, and every expansion also spelled token for token as in the reference."""
        return self.ok and not self.respelled

    def describe(self) -> str:
        """One-line summary of what differs."""
        parts = []
        if self.missing:
            parts.append("missing " + ", ".join(self.missing[:5]) + (" ..." if len(self.missing) > 5 else ""))
        for name, ref, got in self.different[:3]:
            parts.append(f"{name}: {ref!r} != {got!r}")
        if self.errors[0] != self.errors[1]:
            parts.append(f"#error {self.errors[0]} vs {self.errors[1]}")
        for name, ref, got in self.respelled[:3]:
            parts.append(f"respelled {name}: {ref!r} -> {got!r}")
        return "; ".join(parts) or "equivalent"


def gcc_path() -> str | None:
    """The C compiler driver used for preprocessing, if installed."""
    return shutil.which("gcc") or shutil.which("cpp")


def header_macros(header: Path, defines: dict[str, str], work: Path, max_stubs: int = 200) -> HeaderMacros:
    """Preprocess ``header`` with ``defines`` predefined; stubs for missing includes go under ``work/stubs``."""
    gcc = gcc_path()
    if gcc is None:
        raise RuntimeError("gcc is needed for config.h equivalence (apt-get install gcc)")
    stubs = work / "stubs"
    stubs.mkdir(parents=True, exist_ok=True)
    prelude = work / "defines.h"
    prelude.write_text("".join(f"#define {k} {v}\n" for k, v in sorted(defines.items())), encoding="utf-8")
    cmd = [gcc, "-E", "-dM", "-x", "c", "-undef", "-nostdinc", "-I", str(stubs), "-include", str(prelude), str(header)]
    for _ in range(max_stubs):
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        missing = _MISSING.search(proc.stderr)
        if missing is None:
            break
        stub = stubs / missing.group(1).strip()
        if stub.exists():  # cannot make progress: report as an error rather than loop
            break
        stub.parent.mkdir(parents=True, exist_ok=True)
        stub.write_text("", encoding="utf-8")
    result = HeaderMacros(errors=sorted(m.group(1).strip() for m in _ERROR.finditer(proc.stderr)))
    for line in proc.stdout.splitlines():
        m = _DEFINE.match(line)
        if m:
            result.macros[m.group(1)] = (m.group(2) or "") + " " + " ".join((m.group(3) or "").split())
    return result


def compare_headers(reference: Path, candidate: Path, defines: dict[str, str], work: Path) -> Equivalence:
    """Check that ``candidate`` defines every macro of ``reference`` identically under ``defines``."""
    ref = header_macros(reference, defines, work)
    got = header_macros(candidate, defines, work)
    result = Equivalence(errors=(ref.errors, got.errors))
    for name, value in sorted(ref.macros.items()):
        if name not in got.macros:
            result.missing.append(name)
        elif got.macros[name] != value:
            ref_params, _, ref_body = value.partition(" ")
            got_params, _, got_body = got.macros[name].partition(" ")
            same_value = ref_params == got_params and value_form(ref_body) == value_form(got_body)
            bucket = result.respelled if same_value else result.different
            bucket.append((name, value.strip(), got.macros[name].strip()))
    return result
