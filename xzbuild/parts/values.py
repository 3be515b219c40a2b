"""Value kinds of structured hardware fields: parse a macro's C text into YAML data and emit it back.

A macro becomes structured only if ``emit(parse(text))`` has the same value as ``text`` (``(720)`` and
``720`` count as equal, as do ``0x14`` and ``20``). When the canonical text is not token for token the
board's own (``(720)``), the board keeps its spelling as a ``verbatim`` override; ``spelling_problem``
checks that such an override still has the field's value, so the typed value stays the truth.
"""

from __future__ import annotations

import ast
import operator
import re
from typing import Any

_GPIO = re.compile(r"^GPIO_NUM_([0-9]+)\Z")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_HEX = re.compile(r"^0[xX][0-9a-fA-F]+\Z")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.LShift: operator.lshift, ast.RShift: operator.rshift}

KINDS = ("gpio", "int", "bool", "flag", "ident", "addr", "text")


def const_int(text: str) -> int | None:
    """Value of a constant integer expression (decimal/hex literals, + - * / << >>, parens), else None."""
    src = text.strip()
    if not src or not re.fullmatch(r"[0-9a-fA-FxX()+\-*/<> \t]+", src):
        return None
    src = src.replace("/", "//")
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError:
        return None

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return int(_OPS[type(node.op)](ev(node.left), ev(node.right)))
        raise ValueError("not constant")

    try:
        # Reject octal-looking literals ("010") that Python would refuse or read differently than C.
        if re.search(r"(?<![0-9xXa-fA-F])0[0-9]", src):
            return None
        return ev(tree.body)
    except (ValueError, ZeroDivisionError, RecursionError):
        return None


def normalize(text: str) -> str:
    """Canonical form of a macro value for equivalence checks: whitespace collapsed, integers evaluated."""
    text = " ".join(text.split())
    value = const_int(text)
    if value is not None:
        return str(value)
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def parse(kind: str, text: str) -> Any:
    """YAML value for macro text ``text`` under ``kind``; None if this kind cannot carry it exactly."""
    text = " ".join(text.split())
    if kind == "flag":
        return True if text == "" else None
    norm = normalize(text)
    ref = norm if _IDENT.match(norm) and norm not in ("true", "false", "NC") else None
    if kind == "gpio":
        if norm == "GPIO_NUM_NC":
            return "NC"
        if norm == "-1":
            return -1
        m = _GPIO.match(norm)
        if m:
            return int(m.group(1))
        return ref
    if kind == "int":
        value = const_int(text)
        return value if value is not None else ref
    if kind == "bool":
        found = {"true": True, "false": False}.get(norm)
        return found if found is not None else ref
    if kind == "ident":
        return text if _IDENT.match(text) and text not in ("true", "false") else None
    if kind == "addr":
        return text if (_HEX.match(text) or _IDENT.match(text)) and text not in ("true", "false") else None
    if kind == "text":
        return text if text else None
    raise ValueError(f"unknown kind {kind}")


def emit(kind: str, value: Any) -> str:
    """C text for a YAML value of ``kind`` (inverse of ``parse``)."""
    if kind == "flag":
        return ""
    if isinstance(value, str) and kind in ("gpio", "int", "bool") and value != "NC":
        return value  # a reference to another macro or constant, kept verbatim
    if kind == "gpio":
        if value == "NC":
            return "GPIO_NUM_NC"
        return "-1" if value == -1 else f"GPIO_NUM_{value}"
    if kind == "int":
        return str(value)
    if kind == "bool":
        return "true" if value else "false"
    return str(value)


def tokens(text: str) -> str:
    """Macro text as the preprocessor compares it: whitespace runs collapsed to one space."""
    return " ".join(text.split())


def spelling_problem(kind: str, value: Any, text: Any, parens: bool = False) -> str | None:
    """Error text if ``text`` is not a one-line C spelling of ``value`` other than the canonical one
    (which is ``(canonical)`` when the part sets ``parens``); None when it is."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return "expected the C text as a string; quote it (YAML reads 0x14 as a number)"
    if not isinstance(text, str) or not text.strip() or "\n" in text:
        return "expected one line of C text"
    from xzbuild.core.sinks import problem

    bad = problem("c_expr", text)
    if bad:
        return bad
    canonical = emit(kind, value)
    if tokens(text) == (f"({canonical})" if parens else canonical):
        return "same as the canonical spelling; remove the override"
    if normalize(text) != normalize(canonical):
        return f"{text!r} does not evaluate to the field's value {canonical!r}; fix one of them"
    return None


def canonical(kind: str, value: Any) -> Any:
    """``value`` with C spellings of GPIO numbers read as numbers (``GPIO_NUM_40`` → 40, ``GPIO_NUM_NC`` →
    NC), so pin-exists and pin-clash checks see them; the header still spells them ``GPIO_NUM_40``."""
    if kind == "gpio" and isinstance(value, str):
        text = value.strip().removeprefix("(").removesuffix(")").strip()
        if text == "GPIO_NUM_NC":
            return "NC"
        m = _GPIO.match(text)
        if m:
            return int(m.group(1))
    return value


def check(kind: str, value: Any) -> str | None:
    """Error text if ``value`` is not valid YAML data for ``kind`` (None when fine)."""
    is_ref = isinstance(value, str) and bool(_IDENT.match(value)) and value not in ("true", "false")
    if kind == "gpio":
        if value == "NC" or is_ref or (isinstance(value, int) and not isinstance(value, bool) and value >= -1):
            return None
        return "expected a GPIO number, NC, -1 or a C constant name"
    if kind == "int":
        ok = (isinstance(value, int) and not isinstance(value, bool)) or is_ref
        return None if ok else "expected an integer"
    if kind == "bool" and is_ref:
        return None
    if kind in ("bool", "flag"):
        if kind == "flag" and value is not True:
            return "expected true (the macro is defined without a value); remove the key to leave it undefined"
        return None if isinstance(value, bool) else "expected true or false"
    if kind == "ident":
        return None if isinstance(value, str) and _IDENT.match(value) else "expected a C identifier"
    if kind == "addr":
        addr_ok = isinstance(value, str) and bool(_HEX.match(value) or _IDENT.match(value))
        return None if addr_ok else "expected a hex address like '0x18' or a C constant name"
    if kind == "text":
        if not isinstance(value, str) or not value or "\n" in value:
            return "expected one line of C text"
        from xzbuild.core.sinks import problem

        return problem("c_expr", value)
    return f"unknown kind {kind}"
