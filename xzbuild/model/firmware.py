"""``boards/_firmware.yaml``: firmware-global facts (sdkconfig default layers, global Kconfig lists, ...)."""

from __future__ import annotations

from typing import Any

from xzbuild.model.check import Checker, describe
from xzbuild.model.types import DisplayModelChoice, FirmwareFacts, KconfigBlock
from xzbuild.model.yamlmarks import MarkedDoc, join

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
    for kind, raw in (models.items() if isinstance(models, dict) else []):
        path = join("display_models", str(kind))
        m = ck.mapping(raw, path, ["choice", "default", "depends_on", "entries"], required=["choice", "default", "entries"])
        entries = []
        for i, e in enumerate(m.get("entries", []) or []):
            em = ck.mapping(e, join(path, f"entries.{i}"), ["symbol", "label"], required=["symbol", "label"])
            if isinstance(em.get("symbol"), str) and isinstance(em.get("label"), str):
                entries.append((em["symbol"], em["label"]))
        fw.display_models[str(kind)] = DisplayModelChoice(
            name=str(m.get("choice", "")), default=str(m.get("default", "")), entries=entries,
            depends_on=str(m.get("depends_on", "")))
    lists = data.get("global_lists", {})
    for name, raw in (lists.items() if isinstance(lists, dict) else []):
        fw.global_lists[str(name)] = ck.string_list(raw, join("global_lists", str(name)))
    for i, raw in enumerate(data.get("kconfig_blocks", []) or []):
        path = join("kconfig_blocks", i)
        b = ck.mapping(raw, path, ["name", "symbols", "text"], required=["name", "text"])
        fw.kconfig_blocks.append(KconfigBlock(name=str(b.get("name", "")),
                                              symbols=ck.string_list(b.get("symbols", []), join(path, "symbols")),
                                              text=str(b.get("text", ""))))
    for i, raw in enumerate(data.get("cmake_hooks", []) or []):
        path = join("cmake_hooks", i)
        h = ck.mapping(raw, path, ["condition", "components", "symbols", "types"], required=["condition"])
        fw.cmake_hooks.append(dict(h))
    fw.kconfig_order = ck.string_list(data.get("kconfig_order", []), "kconfig_order")
    fw.cmake_order = ck.string_list(data.get("cmake_order", []), "cmake_order")
    for i, raw in enumerate(data.get("locales", []) or []):
        loc = ck.mapping(raw, join("locales", i), ["symbol", "dir"], required=["symbol", "dir"])
        if isinstance(loc.get("symbol"), str) and isinstance(loc.get("dir"), str):
            fw.locales.append((loc["symbol"], loc["dir"]))
    return fw, ck
