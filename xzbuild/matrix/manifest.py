"""What an `idf_component.yml` edit affects: per dependency, its users, its targets, or everything."""

from __future__ import annotations

import re
from collections.abc import Callable

import yaml

from xzbuild.matrix.global_table_changes import TableChange


def _dep_targets(spec: object, all_targets: set[str]) -> set[str] | None:
    """Targets a component dependency is limited to by `rules: - if: target in [...]`, else None."""
    if not isinstance(spec, dict) or not isinstance(spec.get("rules"), list) or not spec["rules"]:
        return None
    allowed = set(all_targets)
    for rule in spec["rules"]:
        condition = rule.get("if", "") if isinstance(rule, dict) else ""
        m = re.fullmatch(r"\s*target\s+(not\s+in|in)\s*\[([^\]]*)\]\s*", str(condition))
        if not m:
            return None
        listed = {t.strip() for t in m.group(2).split(",") if t.strip()}
        allowed &= listed if m.group(1) == "in" else (all_targets - listed)
    return allowed


ComponentUsers = Callable[[str, "set[str] | None"], "frozenset[str] | None"]
"""Maps a component dependency (and the targets its rules allow, None = all) to the board dirs using it;
None = everyone."""


def component_manifest_change(path: str, old: str, new: str, all_targets: set[str],
                              users: ComponentUsers | None = None) -> TableChange:
    """What an `idf_component.yml` edit affects: per changed dependency, the boards using it (`users`),
    else the targets its `rules` limit it to, else everything. Other manifest keys changing → everything."""
    change = TableChange()
    try:
        before, after = yaml.safe_load(old) or {}, yaml.safe_load(new) or {}
    except yaml.YAMLError as exc:
        change.everything = f"{path}: not valid YAML ({exc.__class__.__name__})"
        return change
    if not isinstance(before, dict) or not isinstance(after, dict):
        change.everything = f"{path}: not a component manifest mapping"
        return change
    if {k: v for k, v in before.items() if k != "dependencies"} != {
        k: v for k, v in after.items() if k != "dependencies"
    }:
        change.everything = f"{path}: manifest keys other than dependencies changed"
        return change
    deps_before = before.get("dependencies") or {}
    deps_after = after.get("dependencies") or {}
    for name in sorted(set(deps_before) | set(deps_after), key=str):
        if deps_before.get(name) == deps_after.get(name):
            continue
        if name == "idf":
            change.everything = f"{path}: the ESP-IDF requirement changed"
            return change
        limits = [_dep_targets(spec, all_targets) for spec in (deps_before.get(name), deps_after.get(name))
                  if spec is not None]
        limited = None if any(x is None for x in limits) else set().union(*limits)  # type: ignore[arg-type]
        boards = users(str(name), limited) if users is not None else None
        if boards is not None:
            change.boards |= boards
        elif limited is not None:
            change.targets |= limited
        else:
            change.everything = f"{path}: dependency {name} (shared, or its users unknown) changed"
            return change
    return change
