"""``boards/_firmware.yaml``: firmware-global facts (sdkconfig default layers, global Kconfig lists, ...)."""

from __future__ import annotations

from typing import Any

from xzbuild.core.check import Checker, describe
from xzbuild.core.yamlmarks import MarkedDoc, join
from xzbuild.model.types import DisplayModelChoice, FirmwareFacts, KconfigBlock

FIRMWARE_FILE = "_firmware.yaml"
FIRMWARE_KEYS = ["upstream_commit", "project_ver", "sdkconfig_defaults", "board_choice_defaults", "display_models",
                 "global_lists", "kconfig_blocks", "cmake_defaults", "cmake_hooks", "kconfig_order", "cmake_order",
                 "locales"]


def _str_map(ck: Checker, value: Any, path: str) -> dict[str, str]:
    if not isinstance(value, dict):
        ck.error(path, f"expected a mapping, got {describe(value)}")
        return {}
    out = {}
    for k, v in value.items():
        if isinstance(v, int) and not isinstance(v, bool):
            v = str(v)
        if isinstance(v, str):
            out[str(k)] = v
        else:
            ck.error(join(path, str(k)), f"expected a string, got {describe(v)}")
    return out


def _items(ck: Checker, value: Any, path: str) -> list[Any]:
    if isinstance(value, list):
        return value
    ck.error(path, f"expected a list, got {describe(value)}")
    return []


def _text(ck: Checker, data: dict[str, Any], key: str, path: str) -> str:
    if key not in data:
        return ""
    return ck.typed(data[key], join(path, key), str) or ""


def firmware_from_doc(doc: MarkedDoc) -> tuple[FirmwareFacts, Checker]:
    """Read the facts file; problems are collected in the returned checker."""
    ck = Checker(doc)
    data = ck.mapping(doc.data, "", FIRMWARE_KEYS, required=["sdkconfig_defaults"])
    fw = FirmwareFacts()
    fw.upstream_commit = ck.typed(data.get("upstream_commit", ""), "upstream_commit", str) or ""
    fw.project_ver = ck.typed(data.get("project_ver", ""), "project_ver", str) or ""
    layers = data.get("sdkconfig_defaults", {})
    if isinstance(layers, dict):
        fw.sdkconfig_defaults = {str(k): _str_map(ck, v, join("sdkconfig_defaults", str(k))) for k, v in layers.items()}
    else:
        ck.error("sdkconfig_defaults", f"expected a mapping of layer name to settings, got {describe(layers)}")
    fw.board_choice_defaults = _str_map(ck, data.get("board_choice_defaults", {}), "board_choice_defaults")
    fw.cmake_defaults = _str_map(ck, data.get("cmake_defaults", {}), "cmake_defaults")
    models = data.get("display_models", {})
    if not isinstance(models, dict):
        ck.error("display_models", f"expected a mapping of 'oled'/'lcd' to choices, got {describe(models)}")
        models = {}
    for kind, raw in models.items():
        path = join("display_models", str(kind))
        m = ck.mapping(raw, path, ["choice", "default", "depends_on", "entries"], required=["choice", "default", "entries"])
        entries = []
        for i, e in enumerate(_items(ck, m.get("entries", []), join(path, "entries"))):
            em = ck.mapping(e, join(join(path, "entries"), i), ["symbol", "label"], required=["symbol", "label"])
            symbol = ck.typed(em.get("symbol"), join(path, f"entries.{i}.symbol"), str) if "symbol" in em else None
            label = ck.typed(em.get("label"), join(path, f"entries.{i}.label"), str) if "label" in em else None
            if symbol is not None and label is not None:
                entries.append((symbol, label))
        fw.display_models[str(kind)] = DisplayModelChoice(
            name=_text(ck, m, "choice", path), default=_text(ck, m, "default", path), entries=entries,
            depends_on=_text(ck, m, "depends_on", path))
    lists = data.get("global_lists", {})
    if not isinstance(lists, dict):
        ck.error("global_lists", f"expected a mapping of list name to symbols, got {describe(lists)}")
        lists = {}
    for name, raw in lists.items():
        fw.global_lists[str(name)] = ck.string_list(raw, join("global_lists", str(name)))
    for i, raw in enumerate(_items(ck, data.get("kconfig_blocks", []), "kconfig_blocks")):
        path = join("kconfig_blocks", i)
        b = ck.mapping(raw, path, ["name", "symbols", "text"], required=["name", "text"])
        fw.kconfig_blocks.append(KconfigBlock(name=_text(ck, b, "name", path),
                                              symbols=ck.string_list(b.get("symbols", []), join(path, "symbols")),
                                              text=_text(ck, b, "text", path)))
    for i, raw in enumerate(_items(ck, data.get("cmake_hooks", []), "cmake_hooks")):
        path = join("cmake_hooks", i)
        h = ck.mapping(raw, path, ["condition", "components", "symbols", "types"], required=["condition"])
        hook: dict[str, Any] = {"condition": _text(ck, h, "condition", path)}
        for key in ("components", "symbols", "types"):
            hook[key] = ck.string_list(h.get(key, []), join(path, key))
        fw.cmake_hooks.append(hook)
    fw.kconfig_order = ck.string_list(data.get("kconfig_order", []), "kconfig_order")
    fw.cmake_order = ck.string_list(data.get("cmake_order", []), "cmake_order")
    for i, raw in enumerate(_items(ck, data.get("locales", []), "locales")):
        path = join("locales", i)
        loc = ck.mapping(raw, path, ["symbol", "dir"], required=["symbol", "dir"])
        if "symbol" in loc and "dir" in loc:
            fw.locales.append((_text(ck, loc, "symbol", path), _text(ck, loc, "dir", path)))
    return fw, ck
