"""Turn one board YAML document into a typed Board (per-file checks; cross-file rules live in validate)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xzbuild.core.check import Checker, describe
from xzbuild.core.yamlmarks import MarkedDoc, join
from xzbuild.model.naming import TARGETS, board_file_key
from xzbuild.model.types import (
    NETWORK_CLASSES,
    P4_REV_LESS_V3_LINES,
    Board,
    KconfigEntry,
    SourceFacts,
    Variant,
    parse_idf_spec,
)

if TYPE_CHECKING:
    from xzbuild.parts.items import Item

BOARD_KEYS = ["type", "manufacturer", "dir", "target", "preview", "config_json", "sources", "source_facts", "kconfig",
              "variants", "hardware", "shared_gpios", "acknowledged_pins", "config_h_guard", "config_h_guard_end",
              "config_h", "config_h_columns", "config_h_comment_columns", "config_h_final_newline", "config_h_crlf"]
KCONFIG_KEYS = ["symbol", "label", "target", "text_font", "icon_font", "emoji_collection", "emote_resolution",
                "extra_cmake", "device_aec", "emote_style", "display_model", "target_default", "kconfig_extra",
                "cmake_hooks", "camera_mirror_dynamic", "camera_enable_symbol"]
VARIANT_KEYS = ["name", "legacy_names", "idf_version", "build_options", "sdkconfig", "sdkconfig_unprefixed", "p4x"]
P4X_KEYS = ["name", "legacy_names", "idf_version"]
CODEC_TEXT = re.compile(r"[A-Z0-9]{2,10}(?: \+ [A-Z0-9]{2,10})*(?: or [A-Z0-9]{2,10}(?: \+ [A-Z0-9]{2,10})*)*")
FACT_KEYS = ["lcd_display", "wifi_board", "camera", "network", "codec"]
# Top-level keys the release matrix never reads: load_boards(hardware=False) only syntax-checks them.
HARDWARE_KEYS = ("hardware", "shared_gpios", "acknowledged_pins", "config_h_guard", "config_h_guard_end", "config_h",
                 "config_h_columns", "config_h_comment_columns", "config_h_final_newline", "config_h_crlf")
SDK_KEY_RE = re.compile(r"[A-Za-z0-9_]+")
MACRO_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def board_from_doc(doc: MarkedDoc, board_dir: str) -> tuple[Board | None, Checker]:
    """Build the Board for ``doc``; returns (None, checker) when the file is unusable."""
    ck = Checker(doc)
    data = ck.mapping(doc.data, "", BOARD_KEYS, required=["type", "target"])
    if not data and not isinstance(doc.data, dict):
        return None, ck
    board = Board(dir=board_dir, path=doc.path, type="", target="", doc=doc,
                  hardware_loaded=not any(key in HARDWARE_KEYS for key in doc.skipped))
    for part in board_dir.split("/"):  # the dir names a firmware directory and a CMake string
        ck.sink_ok(part, "", "dir_name")
    if "dir" in data:
        # The firmware dir when its name is no board file name (capitals: ``EnglishTeacher``): the file is
        # ``<board_file_key(dir)>.yaml``, so one dir has one file and the matrix finds it by path.
        fw_dir = ck.typed(data["dir"], "dir", str)
        if fw_dir is not None and all(ck.sink_ok(p, "dir", "firmware_dir") for p in fw_dir.split("/")):
            if board_file_key(fw_dir) != board_dir:
                ck.error("dir", f"{describe(fw_dir)} is kept in boards/{board_file_key(fw_dir)}.yaml, not in "
                                f"boards/{board_dir}.yaml; rename the file or fix dir")
            elif fw_dir == board_dir:
                ck.error("dir", f"{describe(fw_dir)} is this file's own name; drop the key")
            else:
                board.dir = fw_dir
    board.type = ck.typed(data.get("type"), "type", str) or ""
    board.target = ck.typed(data.get("target"), "target", str) or ""
    if board.target and board.target not in TARGETS:
        ck.error("target", f"unknown target {describe(board.target)}; use one of {', '.join(TARGETS)}")
    if "manufacturer" in data:
        board.manufacturer = ck.text(data["manufacturer"], "manufacturer", "manufacturer")
    board.preview = bool(ck.typed(data.get("preview", False), "preview", bool))
    board.has_config_json = bool(ck.typed(data.get("config_json", True), "config_json", bool))
    board.sources = ck.text(data.get("sources", "custom"), "sources", "file_name") or "custom"
    if "source_facts" in data:
        facts = ck.mapping(data["source_facts"], "source_facts", FACT_KEYS)
        flags = {k: bool(ck.typed(v, join("source_facts", k), bool)) for k, v in facts.items()
                 if k not in ("network", "codec")}
        codec = ck.typed(facts.get("codec", ""), join("source_facts", "codec"), str) or ""
        if codec and not CODEC_TEXT.fullmatch(codec):
            ck.error(join("source_facts", "codec"), f"invalid codec {describe(codec)}; write chip names joined by "
                     "' + ', alternatives by ' or ' (e.g. \"ES8311 + ES7210\")")
            codec = ""
        network = ck.typed(facts.get("network", ""), join("source_facts", "network"), str) or ""
        if network and network not in NETWORK_CLASSES.values():
            ck.error(join("source_facts", "network"), f"unknown network {describe(network)}; use one of "
                     f"{', '.join(NETWORK_CLASSES.values())} (the board class's base in the firmware sources)")
            network = ""
        board.source_facts = SourceFacts(**flags, network=network, codec=codec)
    for i, raw in enumerate(_list(ck, data.get("kconfig", []), "kconfig")):
        entry = _kconfig_entry(ck, raw, join("kconfig", i))
        if entry:
            board.kconfig.append(entry)
    if "hardware" in data:
        from xzbuild.parts import check_hardware

        board.hardware = check_hardware(ck, data["hardware"], "hardware")
    for key, pins in (("shared_gpios", board.shared_gpios), ("acknowledged_pins", board.acknowledged_pins)):
        if key not in data:
            continue
        raw = data[key]
        if isinstance(raw, list):
            for i, pin in enumerate(raw):
                if isinstance(pin, int) and not isinstance(pin, bool) and pin >= 0:
                    pins.append(pin)
                else:
                    ck.error(join(key, i), f"expected a GPIO number, got {describe(pin)}")
        else:
            ck.error(key, f"expected a list of GPIO numbers, got {describe(raw)}")
    if "config_h_guard" in data:
        board.config_h_guard = ck.text(data["config_h_guard"], "config_h_guard", "c_macro", optional=True)
    if "config_h_guard_end" in data:
        board.config_h_guard_end = ck.text(data["config_h_guard_end"], "config_h_guard_end", "c_endif_tail",
                                           optional=True)
    if "config_h" in data:
        board.config_h = _items(ck, data["config_h"], "config_h")
        _check_field_slots(ck, board)
    if "config_h_columns" in data:
        board.config_h_columns = _columns(ck, data["config_h_columns"], "config_h_columns")
    if "config_h_comment_columns" in data:
        board.config_h_comment_columns = _columns(ck, data["config_h_comment_columns"], "config_h_comment_columns")
    if "config_h_crlf" in data:
        board.config_h_crlf = ck.typed(data["config_h_crlf"], "config_h_crlf", bool) is True
    if "config_h_final_newline" in data:
        board.config_h_final_newline = ck.typed(data["config_h_final_newline"], "config_h_final_newline", bool) is not False
    for i, raw in enumerate(_list(ck, data.get("variants", []), "variants")):
        board.variants.extend(_variants(ck, board, raw, join("variants", i)))
    for index, variant in enumerate(board.variants):
        variant.index = index
    return board, ck


def _list(ck: Checker, value: Any, path: str) -> list[Any]:
    if isinstance(value, list):
        return value
    ck.error(path, f"expected a list, got {describe(value)}")
    return []


def _kconfig_entry(ck: Checker, raw: Any, path: str) -> KconfigEntry | None:
    data = ck.mapping(raw, path, KCONFIG_KEYS, required=["symbol", "label", "target"])
    if not data:
        return None
    symbol = ck.typed(data.get("symbol"), join(path, "symbol"), str) or ""
    label = ck.typed(data.get("label"), join(path, "label"), str) or ""
    target = ck.typed(data.get("target"), join(path, "target"), str) or ""
    entry = KconfigEntry(symbol=symbol, label=label, target=target)
    for key in ("text_font", "icon_font"):  # font names: checked against their patterns in validate
        if key in data:
            setattr(entry, key, ck.typed(data[key], join(path, key), str, optional=True))
    for key, kind in (("emoji_collection", "cmake_word"), ("emote_resolution", "cmake_word"),
                      ("camera_enable_symbol", "kconfig_symbol")):
        if key in data:
            setattr(entry, key, ck.text(data[key], join(path, key), kind, optional=True))
    if "display_model" in data:
        value = ck.typed(data["display_model"], join(path, "display_model"), str, optional=True)
        if value not in (None, "oled", "lcd"):
            ck.error(join(path, "display_model"), f"expected 'oled' or 'lcd', got {describe(value)}")
        entry.display_model_choice = value
    for key in ("device_aec", "emote_style", "target_default", "camera_mirror_dynamic"):
        if key in data:
            setattr(entry, key, bool(ck.typed(data[key], join(path, key), bool)))
    for key, kind in (("kconfig_extra", "free_text"), ("cmake_hooks", "cmake_word")):
        if key in data:
            setattr(entry, key, ck.string_list(data[key], join(path, key), kind))
    if "extra_cmake" in data:
        extra = data["extra_cmake"]
        if isinstance(extra, dict):
            where = join(path, "extra_cmake")
            for k, v in extra.items():
                if not isinstance(k, str):
                    ck.error(join(where, str(k)), "expected a CMake variable name", key=True)
                elif ck.sink_ok(k, join(where, k), "cmake_variable", key=True) \
                        and ck.text(v, join(where, k), "cmake_arg") is not None:
                    entry.extra_cmake[k] = v
        else:
            ck.error(join(path, "extra_cmake"), f"expected a mapping of CMake variable to value, got {describe(extra)}")
    return entry


def _sdkconfig_lines(ck: Checker, raw: Any, path: str) -> list[str]:
    if not isinstance(raw, dict):
        ck.error(path, f"expected a mapping of Kconfig key (without CONFIG_) to value, got {describe(raw)}")
        return []
    lines = []
    for key, value in raw.items():
        sub = join(path, str(key))
        if not isinstance(key, str) or not SDK_KEY_RE.fullmatch(key):
            ck.error(sub, "Kconfig keys are letters, digits and '_' (write them without CONFIG_)", key=True)
            continue
        if key.startswith("CONFIG_"):
            ck.error(sub, "write the key without the CONFIG_ prefix", key=True)
            continue
        if not ck.sink_ok(key, sub, "sdkconfig_key", key=True):
            continue
        if isinstance(value, bool):
            ck.error(sub, f"got {describe(value)}; write Kconfig booleans as the strings 'y' or 'n'")
            continue
        if isinstance(value, int):
            value = str(value)
        if not isinstance(value, str):
            ck.error(sub, f"expected a string value, got {describe(value)}")
            continue
        if not ck.sink_ok(value, sub, "sdkconfig_value"):
            continue
        lines.append(f"CONFIG_{key}={value}")
    return lines


def _unprefixed_lines(ck: Checker, raw: Any, path: str) -> list[str]:
    """``KEY=value`` lines upstream wrote without CONFIG_ (sdkconfig ignores them); kept verbatim so the
    build sees what upstream's did, and `boards kconfig-check` warns about each."""
    lines = []
    for i, line in enumerate(ck.string_list(raw, path)):
        if line.startswith("CONFIG_") or not re.match(r"[A-Za-z0-9_]+=", line):
            ck.error(join(path, i), f"{describe(line)}: expected KEY=value without CONFIG_ (lines with the prefix "
                                    "go under sdkconfig)")
        elif ck.sink_ok(line.partition("=")[2], join(path, i), "sdkconfig_value"):
            lines.append(line)
    return lines


def _idf(ck: Checker, raw: Any, path: str) -> tuple[Any, str | None]:
    text = ck.typed(raw, path, str, optional=True)
    if text is None:
        return None, None
    try:
        return parse_idf_spec(text), text
    except ValueError as exc:
        ck.error(path, f"invalid ESP-IDF version expression {describe(text)}: {exc}")
        return None, None


def _variants(ck: Checker, board: Board, raw: Any, path: str) -> list[Variant]:
    data = ck.mapping(raw, path, VARIANT_KEYS, required=["name"])
    if not data:
        return []
    name = ck.typed(data.get("name"), join(path, "name"), str) or ""
    spec, spec_text = _idf(ck, data.get("idf_version"), join(path, "idf_version"))
    legacy = ck.string_list(data["legacy_names"], join(path, "legacy_names"), "legacy_name") \
        if "legacy_names" in data else []
    options = data.get("build_options", {})
    if not isinstance(options, dict):
        ck.error(join(path, "build_options"), f"expected a mapping, got {describe(options)}")
        options = {}
    for key, value in options.items():
        if not isinstance(value, (bool, str)):
            ck.error(join(join(path, "build_options"), key), f"expected true/false or a choice string, got {describe(value)}")
    has_append = "sdkconfig" in data or "sdkconfig_unprefixed" in data
    lines = _sdkconfig_lines(ck, data["sdkconfig"], join(path, "sdkconfig")) if "sdkconfig" in data else []
    if "sdkconfig_unprefixed" in data:
        lines += _unprefixed_lines(ck, data["sdkconfig_unprefixed"], join(path, "sdkconfig_unprefixed"))
    base = Variant(board=board, kconfig=None, name=name, target=board.target, index=0, legacy_names=legacy,
                   idf_version=spec, idf_version_text=spec_text, sdkconfig_append=lines,
                   has_sdkconfig_append=has_append, build_options=dict(options), path_key=path)
    if "p4x" not in data:
        return [base]
    pair = ck.mapping(data["p4x"], join(path, "p4x"), P4X_KEYS, required=["name"])
    if board.target and board.target != "esp32p4":
        ck.error(join(path, "p4x"), f"a P4/P4X pair needs target esp32p4, the board targets {board.target}")
    base.chip_variant = "p4"
    base.sdkconfig_append = lines + list(P4_REV_LESS_V3_LINES)
    x_spec, x_text = (spec, spec_text)
    if "idf_version" in pair:
        x_spec, x_text = _idf(ck, pair["idf_version"], join(path, "p4x.idf_version"))
    twin = Variant(board=board, kconfig=None, name=ck.typed(pair.get("name"), join(path, "p4x.name"), str) or "",
                   target=board.target, index=0,
                   legacy_names=ck.string_list(pair["legacy_names"], join(path, "p4x.legacy_names"), "legacy_name")
                   if "legacy_names" in pair else [],
                   idf_version=x_spec, idf_version_text=x_text, sdkconfig_append=list(lines),
                   has_sdkconfig_append=has_append, build_options=dict(options), chip_variant="p4x",
                   path_key=join(path, "p4x"))
    return [base, twin]


def _columns(ck: Checker, raw: Any, path: str) -> dict[str, list[int]]:
    """``config_h_columns``: macro -> value column (int) or one column per occurrence (list of ints)."""
    out: dict[str, list[int]] = {}
    if not isinstance(raw, dict):
        ck.error(path, f"expected a mapping of macro name -> column, got {describe(raw)}")
        return out
    for name, value in raw.items():
        sub = join(path, str(name))
        cols = value if isinstance(value, list) else [value]
        if not MACRO_RE.fullmatch(str(name)):
            ck.error(sub, f"{describe(name)} is not a C macro name", key=True)
        elif not cols or any(isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= 200 for c in cols):
            ck.error(sub, f"expected a column 0..200 or a list of them, got {describe(value)}")
        else:
            out[str(name)] = list(cols)
    return out


def _check_field_slots(ck: Checker, board: Board) -> None:
    """Each ``part.field`` a ``hardware: [...]`` slot names is set in ``hardware`` and named only once."""
    from xzbuild.parts import named_fields

    seen: set[str] = set()
    for path in named_fields(board.config_h):
        part, _, name = path.partition(".")
        if path in seen:
            ck.error("config_h", f"hardware field {path} is placed twice; keep one 'hardware' entry for it")
        elif name not in board.hardware.get(part, {}):
            ck.error("config_h", f"a hardware slot names {path} but hardware.{part}.{name} is not set; set it or "
                                 "drop it from the slot")
        seen.add(path)


def _items(ck: Checker, raw: Any, path: str) -> list[Item]:
    """The config.h item tree as stored in YAML (``define``/``include``/``raw``/``branches``/``hardware``)."""
    from xzbuild.parts.items import Conditional, Define, HardwareSlot, Include, Raw

    out: list[Item] = []
    for i, item in enumerate(_list(ck, raw, path)):
        sub = join(path, i)
        if item == "hardware":
            out.append(HardwareSlot(None))
            continue
        if not isinstance(item, dict) or len(item) == 0:
            ck.error(sub, f"expected a config.h item (define/include/raw/branches/hardware), got {describe(item)}")
            continue
        kind = next(iter(item))
        if kind == "define":
            data = ck.mapping(item, sub, ["define", "value", "comment", "params"])
            name = ck.text(data.get("define"), join(sub, "define"), "c_macro")
            value = data.get("value", "")
            if isinstance(value, (int, bool)) and not isinstance(value, bool):
                value = str(value)
            value = ck.text(value, join(sub, "value"), "c_expr") or ""
            comment = ck.text(data.get("comment"), join(sub, "comment"), "c_comment", optional=True)
            params = ck.text(data.get("params"), join(sub, "params"), "c_params", optional=True)
            if name:
                out.append(Define(name, value, comment, params))
        elif kind in ("include", "raw"):
            ck.mapping(item, sub, [kind])
            text = ck.text(item[kind], join(sub, kind), "c_include" if kind == "include" else "c_raw")
            if text is not None:
                out.append(Include(text) if kind == "include" else Raw(text))
        elif kind == "branches":
            ck.mapping(item, sub, ["branches", "end", "indent"])
            end = ck.text(item.get("end"), join(sub, "end"), "c_endif_tail", optional=True)
            indent = ck.typed(item.get("indent", 0), join(sub, "indent"), int) or 0
            branches: list[tuple[str | None, list[Item]]] = []
            for j, branch in enumerate(_list(ck, item["branches"], join(sub, "branches"))):
                bpath = join(join(sub, "branches"), j)
                bdata = ck.mapping(branch, bpath, ["when", "items"], required=["when"])
                when = ck.typed(bdata.get("when"), join(bpath, "when"), str)
                if when is None:
                    continue
                first = j == 0
                word = when.split(" ", 1)[0]
                if (first and word not in ("if", "ifdef", "ifndef")) or (not first and word not in ("elif", "else")):
                    expect = "if/ifdef/ifndef" if first else "elif/else"
                    ck.error(join(bpath, "when"), f"expected a condition starting with {expect}, got {describe(when)}")
                    continue
                if not ck.sink_ok(when, join(bpath, "when"), "c_condition"):
                    continue
                branches.append((None if when == "else" else when, _items(ck, bdata.get("items", []), join(bpath, "items"))))
            if branches:
                out.append(Conditional(branches, end=end, indent=indent))
        elif kind == "hardware" and isinstance(item.get("hardware"), list):
            ck.mapping(item, sub, ["hardware"])
            out.append(HardwareSlot(None, fields=tuple(_field_paths(ck, item["hardware"], join(sub, "hardware")))))
        elif kind == "hardware":
            from xzbuild.parts import check_hardware

            ck.mapping(item, sub, ["hardware"])
            out.append(HardwareSlot(check_hardware(ck, item["hardware"], join(sub, "hardware"))))
        else:
            ck.error(sub, f"unknown config.h item '{kind}'; use define, include, raw, branches or hardware", key=True)
    return out


def _field_paths(ck: Checker, raw: list[Any], path: str) -> list[str]:
    """``[audio.input_sample_rate, ...]``: top-level hardware fields emitted at this place, in this order."""
    from xzbuild.parts import PARTS

    out = []
    for i, text in enumerate(raw):
        part, _, name = str(text).partition(".")
        if not isinstance(text, str) or part not in PARTS or PARTS[part].field(name) is None:
            ck.error(join(path, i), f"{describe(text)} is not a hardware field; write <part>.<field>, e.g. "
                                    "audio.input_sample_rate")
        else:
            out.append(text)
    return out


def board_dir_for(root: Path, path: Path) -> str:
    """``boards/waveshare/esp32-p4-nano.yaml`` → ``waveshare/esp32-p4-nano``."""
    rel = path.relative_to(root).as_posix()
    return rel[: -len(".yaml")] if rel.endswith(".yaml") else rel
