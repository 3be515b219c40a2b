"""Build the YAML data of one board file from upstream facts (config.json, Kconfig, CMake, sources, config.h)."""

from __future__ import annotations

from typing import Any

from xzbuild.model.types import P4_REV_LESS_V3_LINES, KconfigEntry, SourceFacts
from xzbuild.parts.items import Conditional, Define, HardwareSlot, Include, Item, Raw


def items_to_yaml(items: list[Item]) -> list[Any]:
    """Item tree → YAML-ready data (the inverse of the loader's ``config_h`` reading)."""
    out: list[Any] = []
    for item in items:
        if isinstance(item, Define):
            entry: dict[str, Any] = {"define": item.name}
            if item.params:
                entry["params"] = item.params
            if item.value:
                entry["value"] = item.value
            if item.comment:
                entry["comment"] = item.comment
            out.append(entry)
        elif isinstance(item, Include):
            out.append({"include": item.text})
        elif isinstance(item, Raw):
            out.append({"raw": item.line})
        elif isinstance(item, Conditional):
            entry = {"branches": [{"when": "else" if cond is None else cond, "items": items_to_yaml(body)}
                                  for cond, body in item.branches]}
            if item.end:
                entry["end"] = item.end
            if item.indent:
                entry["indent"] = item.indent
            out.append(entry)
        elif isinstance(item, HardwareSlot) and item.fields is not None:
            out.append({"hardware": list(item.fields)})
        elif isinstance(item, HardwareSlot):
            out.append("hardware" if item.values is None else {"hardware": item.values})
    return out


def columns_to_yaml(items: list[Item], attr: str = "column") -> dict[str, Any]:
    """Macro -> value (or comment, ``attr="comment_column"``) column for defines the board aligned: one int,
    or one per occurrence in file order."""
    found: dict[str, list[int]] = {}

    def walk(tree: list[Item]) -> None:
        for item in tree:
            if isinstance(item, Define):
                found.setdefault(item.name, []).append(getattr(item, attr))
            elif isinstance(item, Conditional):
                for _, body in item.branches:
                    walk(body)

    walk(items)
    out: dict[str, Any] = {}
    for name, cols in found.items():
        if any(cols):
            out[name] = cols[0] if len(set(cols)) == 1 else cols
    return out


def kconfig_to_yaml(entry: KconfigEntry) -> dict[str, Any]:
    """One kconfig entry, omitting defaults so files stay short."""
    data: dict[str, Any] = {"symbol": entry.symbol, "label": entry.label, "target": entry.target}
    for key in ("text_font", "icon_font", "emoji_collection", "emote_resolution"):
        if getattr(entry, key) is not None:
            data[key] = getattr(entry, key)
    if entry.extra_cmake:
        data["extra_cmake"] = dict(entry.extra_cmake)
    for key in ("device_aec", "emote_style", "target_default", "camera_mirror_dynamic"):
        if getattr(entry, key):
            data[key] = True
    if entry.display_model_choice:
        data["display_model"] = entry.display_model_choice
    if entry.camera_enable_symbol:
        data["camera_enable_symbol"] = entry.camera_enable_symbol
    for key in ("kconfig_extra", "cmake_hooks"):
        if getattr(entry, key):
            data[key] = list(getattr(entry, key))
    return data


def _sdk_map(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        key, value = line.split("=", 1)
        out[key.removeprefix("CONFIG_")] = value
    return out


def _is_p4_pair(first: dict[str, Any], second: dict[str, Any]) -> bool:
    allowed = {"name", "legacy_names", "idf_version", "sdkconfig_append", "build_options"}
    if set(first) - allowed or set(second) - allowed:
        return False
    a = first.get("sdkconfig_append")
    b = second.get("sdkconfig_append")
    if not isinstance(a, list) or not isinstance(b, list):
        return False
    return (a == b + list(P4_REV_LESS_V3_LINES) and first.get("build_options") == second.get("build_options")
            and first.get("name") != second.get("name"))


def variants_to_yaml(builds: list[dict[str, Any]], target: str) -> list[dict[str, Any]]:
    """config.json ``builds[]`` → YAML variants, folding P4 rev<3 / P4X twins into one entry with ``p4x``."""
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(builds):
        build = builds[i]
        pair = target == "esp32p4" and i + 1 < len(builds) and _is_p4_pair(build, builds[i + 1])
        lines = list(build.get("sdkconfig_append", []) or [])
        if pair:
            lines = lines[: -len(P4_REV_LESS_V3_LINES)]
        v: dict[str, Any] = {"name": build["name"]}
        if build.get("legacy_names"):
            v["legacy_names"] = list(build["legacy_names"])
        if "idf_version" in build:
            v["idf_version"] = build["idf_version"]
        if "build_options" in build:
            v["build_options"] = dict(build["build_options"])
        if "sdkconfig_append" in build:
            unprefixed = [line for line in lines if not line.startswith("CONFIG_")]
            if unprefixed and len(unprefixed) == len(lines):
                v["sdkconfig_unprefixed"] = unprefixed
            else:
                v["sdkconfig"] = _sdk_map([line for line in lines if line.startswith("CONFIG_")])
                if unprefixed:
                    v["sdkconfig_unprefixed"] = unprefixed
        if pair:
            twin = builds[i + 1]
            p4x: dict[str, Any] = {"name": twin["name"]}
            if twin.get("legacy_names"):
                p4x["legacy_names"] = list(twin["legacy_names"])
            if twin.get("idf_version") != build.get("idf_version"):
                p4x["idf_version"] = twin.get("idf_version")
            v["p4x"] = p4x
            i += 1
        out.append(v)
        i += 1
    return out


def facts_to_yaml(facts: SourceFacts) -> dict[str, bool | str]:
    """Source facts as a YAML mapping (``network`` only when the sources name a known network base class)."""
    out: dict[str, bool | str] = {"lcd_display": facts.lcd_display, "wifi_board": facts.wifi_board,
                                  "camera": facts.camera}
    if facts.network:
        out["network"] = facts.network
    if facts.codec:
        out["codec"] = facts.codec
    return out
