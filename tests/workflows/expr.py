"""GitHub Actions expressions (the subset the workflows here use), evaluated strictly.

Grammar (GitHub's "Expressions" reference): literals (``null``, booleans, numbers, ``'strings'`` with ``''``
escapes), context access (``a.b``, ``a['b']``, ``a.*.b``), ``!``, comparisons (``== != < <= > >=``, strings
compared case-insensitively), ``&&``/``||`` returning an operand, parentheses, and the functions in
``FUNCTIONS`` plus the status functions the caller provides. Anything else — an unknown function, an unknown
top-level context, a syntax GitHub would reject — raises ``ExprError``; nothing is silently empty.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any


class ExprError(Exception):
    pass


class Strict(dict):  # type: ignore[type-arg]
    """A context whose unknown keys are errors (``github.nonexistent``), unlike ``env``/``outputs``."""

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.name = name


TOKEN = re.compile(r"""\s*(?:
    (?P<num>0x[0-9a-fA-F]+|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
  | (?P<str>'(?:[^']|'')*')
  | (?P<op>==|!=|<=|>=|&&|\|\||[!<>()\[\].,*])
  | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
)""", re.X)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ExprError(f"cannot parse expression at {text[pos:pos + 20]!r} in {text!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def to_str(value: Any) -> str:
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2)
    return str(value)


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, 0.0, "") and not (isinstance(value, float) and value != value)


def _num(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(int(value, 16)) if value.strip().lower().startswith("0x") else float(value.strip() or 0)
        except ValueError:
            return float("nan")
    return float("nan")


def _equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
            return False
        return _num(a) == _num(b)
    if isinstance(a, str):
        return a.lower() == b.lower()
    return bool(a == b)


def _compare(op: str, a: Any, b: Any) -> bool:
    if op == "==":
        return _equal(a, b)
    if op == "!=":
        return not _equal(a, b)
    if isinstance(a, str) and isinstance(b, str):
        x: Any = a.lower()
        y: Any = b.lower()
    else:
        x, y = _num(a), _num(b)
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def _format(fmt: str, *args: Any) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(0) in ("{{", "}}"):
            return m.group(0)[0]
        i = int(m.group(1))
        if i >= len(args):
            raise ExprError(f"format(): no argument {{{i}}} in {fmt!r}")
        return to_str(args[i])
    return re.sub(r"\{\{|\}\}|\{(\d+)\}", sub, fmt)


def _contains(hay: Any, needle: Any) -> bool:
    if isinstance(hay, list):
        return any(_equal(item, needle) for item in hay)
    return to_str(needle).lower() in to_str(hay).lower()


def _from_json(text: Any) -> Any:
    try:
        return json.loads(to_str(text))
    except json.JSONDecodeError as exc:
        raise ExprError(f"fromJSON(): not JSON ({exc}): {to_str(text)[:80]!r}") from None


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "contains": _contains,
    "startswith": lambda s, p: to_str(s).lower().startswith(to_str(p).lower()),
    "endswith": lambda s, p: to_str(s).lower().endswith(to_str(p).lower()),
    "format": lambda fmt, *a: _format(to_str(fmt), *a),
    "join": lambda arr, sep=",": to_str(sep).join(to_str(x) for x in arr) if isinstance(arr, list) else to_str(arr),
    "tojson": lambda v: json.dumps(v, indent=2),
    "fromjson": _from_json,
}


class Evaluator:
    """Evaluate one expression against ``contexts`` (name → value) and ``extra`` functions (status, hashFiles)."""

    def __init__(self, contexts: Mapping[str, Any], extra: Mapping[str, Callable[..., Any]] | None = None) -> None:
        self.contexts = contexts
        self.functions = dict(FUNCTIONS)
        for name, fn in (extra or {}).items():
            self.functions[name.lower()] = fn

    def evaluate(self, text: str) -> Any:
        self.toks = _tokens(text)
        self.i = 0
        self.text = text
        if not self.toks:
            raise ExprError("empty expression")
        value = self._or()
        if self.i != len(self.toks):
            raise ExprError(f"unexpected {self.toks[self.i][1]!r} in {text!r}")
        return value

    # precedence climbing: || < && < == != < < <= > >= < ! < access
    def _peek(self) -> tuple[str, str]:
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "")

    def _take(self, value: str) -> None:
        if self._peek()[1] != value:
            raise ExprError(f"expected {value!r}, found {self._peek()[1] or 'end'!r} in {self.text!r}")
        self.i += 1

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == ("op", "||"):
            self.i += 1
            right = self._and()
            left = left if truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._cmp()
        while self._peek() == ("op", "&&"):
            self.i += 1
            right = self._cmp()
            left = right if truthy(left) else left
        return left

    def _cmp(self) -> Any:
        left = self._unary()
        while self._peek()[0] == "op" and self._peek()[1] in ("==", "!=", "<", "<=", ">", ">="):
            op = self._peek()[1]
            self.i += 1
            left = _compare(op, left, self._unary())
        return left

    def _unary(self) -> Any:
        if self._peek() == ("op", "!"):
            self.i += 1
            return not truthy(self._unary())
        return self._postfix(self._primary())

    def _primary(self) -> Any:
        kind, tok = self._peek()
        self.i += 1
        if kind == "num":
            return float(int(tok, 16)) if tok.lower().startswith("0x") else float(tok)
        if kind == "str":
            return tok[1:-1].replace("''", "'")
        if kind == "op" and tok == "(":
            value = self._or()
            self._take(")")
            return value
        if kind == "name":
            low = tok.lower()
            if low in ("true", "false"):
                return low == "true"
            if low == "null":
                return None
            if self._peek() == ("op", "("):
                return self._call(tok)
            if tok not in self.contexts:
                raise ExprError(f"unknown context {tok!r} in {self.text!r} (known: {', '.join(sorted(self.contexts))})")
            return self.contexts[tok]
        raise ExprError(f"unexpected {tok!r} in {self.text!r}")

    def _call(self, name: str) -> Any:
        fn = self.functions.get(name.lower())
        if fn is None:
            raise ExprError(f"unknown function {name}() in {self.text!r}")
        self._take("(")
        args: list[Any] = []
        if self._peek() != ("op", ")"):
            args.append(self._or())
            while self._peek() == ("op", ","):
                self.i += 1
                args.append(self._or())
        self._take(")")
        try:
            return fn(*args)
        except TypeError as exc:
            raise ExprError(f"{name}(): {exc}") from None

    def _postfix(self, value: Any) -> Any:
        while True:
            tok = self._peek()
            if tok == ("op", "."):
                self.i += 1
                kind, key = self._peek()
                self.i += 1
                if kind == "op" and key == "*":
                    value = _star(value)
                    continue
                if kind != "name":
                    raise ExprError(f"expected a property name after '.' in {self.text!r}")
                value = _index(value, key, self.text)
            elif tok == ("op", "["):
                self.i += 1
                key = self._or()
                self._take("]")
                value = _index(value, key, self.text)
            else:
                return value


def _star(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    return []


def _index(value: Any, key: Any, text: str) -> Any:
    if isinstance(value, list) and not isinstance(key, str):
        i = int(_num(key))
        return value[i] if 0 <= i < len(value) else None
    if isinstance(value, list):  # filtered object access after .*
        return [_index(v, key, text) for v in value if isinstance(v, dict)]
    if isinstance(value, Strict):
        if to_str(key) not in value:
            raise ExprError(f"{value.name} has no property {to_str(key)!r} (in {text!r}); the runner knows: "
                            f"{', '.join(sorted(value)) or 'none'}")
        return value[to_str(key)]
    if isinstance(value, dict):
        lowered = {k.lower(): v for k, v in value.items()}
        return lowered.get(to_str(key).lower())
    return None


EMBED = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def interpolate(text: str, ev: Evaluator) -> str:
    """Replace every ``${{ expr }}`` in ``text`` with the evaluated value as a string."""
    return EMBED.sub(lambda m: to_str(ev.evaluate(m.group(1))), text)


def evaluate_value(text: str, ev: Evaluator) -> Any:
    """A YAML value: ``${{ x }}`` alone keeps x's type (a matrix from fromJSON); otherwise a string."""
    m = EMBED.fullmatch(text.strip())
    if m:
        return ev.evaluate(m.group(1))
    return interpolate(text, ev)


STATUS_CALL = re.compile(r"\b(success|failure|always|cancelled)\s*\(", re.I)


def condition(text: str, ev: Evaluator) -> bool:
    """An ``if:`` value, bare or wrapped in ``${{ }}``; without a status function GitHub prepends ``success() &&``."""
    text = text.strip()
    m = EMBED.fullmatch(text)
    expr = m.group(1) if m else text
    if not STATUS_CALL.search(expr):
        expr = f"success() && ({expr})"
    return truthy(ev.evaluate(expr))
