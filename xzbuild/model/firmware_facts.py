"""``boards/_firmware.yaml``: firmware-global facts (sdkconfig default layers, global Kconfig lists, ...)."""

from __future__ import annotations

from typing import Any

from xzbuild.core.check import Checker, describe
from xzbuild.core.sinks import text_problem
from xzbuild.core.yamlmarks import MarkedDoc, join
from xzbuild.model.types import DisplayModelChoice, FirmwareFacts, KconfigBlock

FIRMWARE_FILE = "_firmware.yaml"
FIRMWARE_KEYS = ["upstream_commit", "project_ver", "sdkconfig_defaults", "board_choice_defaults", "display_models",
                 "global_lists", "kconfig_blocks", "cmake_defaults", "cmake_hooks", "kconfig_order", "cmake_order",
                 "locales", "unimported"]


def _str_map(ck: Checker, value: Any, path: str, key_kind: str | None = None,
             value_kind: str | None = None) -> dict[str, str]:
    """A mapping of strings, each key and value checked for its sink (see :mod:`xzbuild.core.sinks`)."""
    if not isinstance(value, dict):
        ck.error(path, f"expected a mapping, got {describe(value)}")
        return {}
    out = {}
    for k, v in value.items():
        sub = join(path, str(k))
        if key_kind is not None and not ck.sink_ok(str(k), sub, key_kind, key=True):
            continue
        if isinstance(v, int) and not isinstance(v, bool):
            v = str(v)
        if not isinstance(v, str):
            ck.error(sub, f"expected a string, got {describe(v)}")
        elif value_kind is None or ck.sink_ok(v, sub, value_kind):
            out[str(k)] = v
    return out


def _sdkconfig_layer(ck: Checker, value: Any, path: str) -> dict[str, str]:
    """One sdkconfig.defaults layer: Kconfig keys and values; the partition table a relative CSV path inside
    the tree (it becomes a path ESP-IDF opens)."""
    from xzbuild.partitions.refs import is_safe_ref

    out = _str_map(ck, value, path, "sdkconfig_key", "sdkconfig_value")
    table = out.get("PARTITION_TABLE_CUSTOM_FILENAME")
    if table is not None and not is_safe_ref(table.strip('"')):
        ck.error(join(path, "PARTITION_TABLE_CUSTOM_FILENAME"),
                 f"{describe(table)} is not a relative .csv path inside the firmware tree; name a table under "
                 "partitions/")
        del out["PARTITION_TABLE_CUSTOM_FILENAME"]
    return out


def _items(ck: Checker, value: Any, path: str) -> list[Any]:
    if isinstance(value, list):
        return value
    ck.error(path, f"expected a list, got {describe(value)}")
    return []


def _text(ck: Checker, data: dict[str, Any], key: str, path: str, kind: str = "free_text") -> str:
    if key not in data:
        return ""
    return ck.text(data[key], join(path, key), kind) or ""


def _kconfig_text(ck: Checker, data: dict[str, Any], path: str) -> str:
    """An imported Kconfig block (kept as upstream wrote it): printable lines, no ``$(`` macro."""
    text = ck.typed(data.get("text", ""), join(path, "text"), str) or ""
    for number, line in enumerate(text.split("\n"), 1):
        bad = text_problem(line) or ("holds '$(' (Kconfig would expand it as a macro)" if "$(" in line else None)
        if bad:
            ck.error(join(path, "text"), f"line {number} {bad}; expected printable Kconfig lines")
            return ""
    return text


def firmware_from_doc(doc: MarkedDoc) -> tuple[FirmwareFacts, Checker]:
    """Read the facts file; problems are collected in the returned checker."""
    ck = Checker(doc)
    data = ck.mapping(doc.data, "", FIRMWARE_KEYS, required=["sdkconfig_defaults"])
    fw = FirmwareFacts()
    fw.upstream_commit = _text(ck, data, "upstream_commit", "", "commit_id")
    fw.project_ver = _text(ck, data, "project_ver", "", "version")
    layers = data.get("sdkconfig_defaults", {})
    if isinstance(layers, dict):
        fw.sdkconfig_defaults = {str(k): _sdkconfig_layer(ck, v, join("sdkconfig_defaults", str(k)))
                                 for k, v in layers.items() if ck.sink_ok(str(k), join("sdkconfig_defaults", str(k)),
                                                                           "file_name", key=True)}
    else:
        ck.error("sdkconfig_defaults", f"expected a mapping of layer name to settings, got {describe(layers)}")
    fw.board_choice_defaults = _str_map(ck, data.get("board_choice_defaults", {}), "board_choice_defaults",
                                        "file_name", "board_symbol")
    fw.cmake_defaults = _str_map(ck, data.get("cmake_defaults", {}), "cmake_defaults", "cmake_variable", "cmake_arg")
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
            symbol = ck.text(em.get("symbol"), join(path, f"entries.{i}.symbol"), "kconfig_symbol") \
                if "symbol" in em else None
            label = ck.text(em.get("label"), join(path, f"entries.{i}.label"), "kconfig_prompt") \
                if "label" in em else None
            if symbol is not None and label is not None:
                entries.append((symbol, label))
        fw.display_models[str(kind)] = DisplayModelChoice(
            name=_text(ck, m, "choice", path, "kconfig_symbol"), default=_text(ck, m, "default", path,
                                                                               "kconfig_symbol"),
            entries=entries, depends_on=_text(ck, m, "depends_on", path, "kconfig_expr"))
    lists = data.get("global_lists", {})
    if not isinstance(lists, dict):
        ck.error("global_lists", f"expected a mapping of list name to symbols, got {describe(lists)}")
        lists = {}
    for name, raw in lists.items():
        if ck.sink_ok(str(name), join("global_lists", str(name)), "kconfig_symbol", key=True):
            fw.global_lists[str(name)] = ck.string_list(raw, join("global_lists", str(name)), "board_symbol")
    for i, raw in enumerate(_items(ck, data.get("kconfig_blocks", []), "kconfig_blocks")):
        path = join("kconfig_blocks", i)
        b = ck.mapping(raw, path, ["name", "symbols", "text"], required=["name", "text"])
        fw.kconfig_blocks.append(KconfigBlock(name=_text(ck, b, "name", path),
                                              symbols=ck.string_list(b.get("symbols", []), join(path, "symbols"),
                                                                     "kconfig_symbol"),
                                              text=_kconfig_text(ck, b, path)))
    for i, raw in enumerate(_items(ck, data.get("cmake_hooks", []), "cmake_hooks")):
        path = join("cmake_hooks", i)
        h = ck.mapping(raw, path, ["condition", "components", "symbols", "types"], required=["condition"])
        hook: dict[str, Any] = {"condition": _text(ck, h, "condition", path, "cmake_condition")}
        for key, kind in (("components", "cmake_word"), ("symbols", "board_symbol"), ("types", "cmake_word")):
            hook[key] = ck.string_list(h.get(key, []), join(path, key), kind)
        fw.cmake_hooks.append(hook)
    fw.kconfig_order = ck.string_list(data.get("kconfig_order", []), "kconfig_order", "board_symbol")
    fw.cmake_order = ck.string_list(data.get("cmake_order", []), "cmake_order", "board_symbol")
    for i, raw in enumerate(_items(ck, data.get("locales", []), "locales")):
        path = join("locales", i)
        loc = ck.mapping(raw, path, ["symbol", "dir"], required=["symbol", "dir"])
        if "symbol" in loc and "dir" in loc:
            fw.locales.append((_text(ck, loc, "symbol", path, "kconfig_symbol"),
                               _text(ck, loc, "dir", path, "locale_dir")))
    for i, raw in enumerate(_items(ck, data.get("unimported", []), "unimported")):
        # boards the import skipped (upstream's own broken files): generate leaves their table lines as they are
        path = join("unimported", i)
        u = ck.mapping(raw, path, ["dir", "symbols", "why"], required=["dir", "why"])
        board_dir = _text(ck, u, "dir", path)
        _text(ck, u, "why", path)
        if board_dir:
            fw.unimported[board_dir] = ck.string_list(u.get("symbols", []), join(path, "symbols"), "board_symbol")
    return fw, ck
