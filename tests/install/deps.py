"""The runtime dependency closure of xzbuild as an end user gets it: pyproject.toml's ``dependencies`` (no
extras), then each installed distribution's own ``Requires-Dist`` (markers evaluated for this machine, no
extras), as pip's resolver would follow them."""

from __future__ import annotations

import importlib.metadata as md
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def declared(extra: str | None = None) -> list[Requirement]:
    """pyproject.toml's runtime requirements (or one extra's)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return [Requirement(t) for t in texts]


def closure(roots: list[Requirement]) -> dict[str, md.Distribution]:
    """Canonical name -> installed distribution, for ``roots`` and everything they require (no extras)."""
    seen: dict[str, md.Distribution] = {}
    todo = [(r, frozenset(r.extras)) for r in roots]
    while todo:
        req, extras = todo.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
            continue
        name = canonicalize_name(req.name)
        if name in seen and not req.extras:
            continue
        dist = md.distribution(req.name)
        seen[name] = dist
        for text in dist.requires or []:
            sub = Requirement(text)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in (req.extras or {""})):
                todo.append((sub, frozenset(sub.extras)))
    return seen
