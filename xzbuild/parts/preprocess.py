"""A small C-preprocessor evaluator for config.h item trees: which macros a build sees, with what values.

Enough for board headers (``#if``/``#ifdef``/``#elif`` on Kconfig symbols and in-file macros, ``defined``,
``!``, ``&&``, ``||``, comparisons); used to check that emitted headers match upstream per variant.
"""

from __future__ import annotations

import re

from xzbuild.parts.items import Conditional, Define, Include, Item, Raw
from xzbuild.parts.values import normalize, tokens

_TOKEN = re.compile(r"\s*(defined|\d+|[A-Za-z_]\w*|&&|\|\||==|!=|<=|>=|[()!<>+\-*/])")


def _tokens(expr: str) -> list[str]:
    expr = re.sub(r"/\*.*?\*/", " ", expr).split("//")[0].strip()
    out, pos = [], 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m:
            raise ValueError(f"cannot evaluate #if expression {expr!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


def eval_condition(condition: str, env: dict[str, str]) -> bool:
    """Truth of ``ifdef X`` / ``ifndef X`` / ``if expr`` / ``elif expr`` given macro values ``env``."""
    word, _, rest = condition.partition(" ")
    rest = rest.strip()
    if word == "ifdef":
        return rest.split()[0] in env
    if word == "ifndef":
        return rest.split()[0] not in env
    toks = _tokens(rest)
    py: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == "defined":
            if i + 1 < len(toks) and toks[i + 1] == "(":
                name, i = toks[i + 2], i + 4
            else:
                name, i = toks[i + 1], i + 2
            py.append("1" if name in env else "0")
            continue
        if re.fullmatch(r"[A-Za-z_]\w*", t):
            value = normalize(env.get(t, "0")) or "0"
            py.append(value if re.fullmatch(r"-?\d+", value) else ("1" if value in ("true", "y") else "0"))
        else:
            py.append({"&&": " and ", "||": " or ", "!": " not ", "/": "//"}.get(t, t))
        i += 1
    return bool(eval("".join(py), {"__builtins__": {}}, {}))  # noqa: S307 - tokens are whitelisted above


def defined_macros(items: list[Item], env: dict[str, str], *, strict: bool = False) -> dict[str, str]:
    """Macros the header defines (name → normalised value) for a build whose Kconfig values are ``env``.

    ``env`` uses ``CONFIG_X`` names; ``y`` values count as 1. In-file defines extend it as they are seen.
    With ``strict`` the values are the token text (whitespace collapsed) instead of the evaluated value,
    so ``(720)`` and ``720`` differ as they do in ``gcc -E -dM`` output.
    """
    spell = tokens if strict else normalize
    scope = {k: ("1" if v == "y" else v) for k, v in env.items() if v != "n"}
    result: dict[str, str] = {}

    def run(tree: list[Item]) -> None:
        for item in tree:
            if isinstance(item, Define):
                value = spell(item.value) if not item.params else f"{item.params} {spell(item.value)}"
                scope[item.name] = value
                result[item.name] = value
            elif isinstance(item, Raw):
                for line in item.line.split("\n"):
                    m = re.match(r"\s*#\s*undef\s+(\w+)", line)
                    if m:
                        scope.pop(m.group(1), None)
                        result.pop(m.group(1), None)
            elif isinstance(item, Conditional):
                for condition, body in item.branches:
                    if condition is None or eval_condition(condition, scope):
                        run(body)
                        break
            elif not isinstance(item, Include):
                raise TypeError("defined_macros needs an emitted tree (call emit_config_h first)")

    run(items)
    return result
