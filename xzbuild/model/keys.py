"""Every board-file key declared once: its value kind, required or optional, default, one doc line, and the
dataclass field it fills.

The loader (:mod:`xzbuild.model.boardfile`), the JSON Schema (:mod:`xzbuild.model.schema`) and the key table
in docs/board-model.md are all read off these declarations, the way ESPHome derives validation and docs from
one ``CONFIG_SCHEMA``. A kind is the pair (how the loader reads and checks a value, the schema fragment that
says the same thing); string kinds are the sinks of :mod:`xzbuild.core.sinks`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xzbuild.core.check import Checker, describe
from xzbuild.core.sinks import MAX_LEN, problem, schema_pattern
from xzbuild.core.yamlmarks import join
from xzbuild.model.naming import (
    ICON_FONT_RE,
    IDENT_RE,
    LABEL_RE,
    STALE_LABEL_WORDS,
    SYMBOL_RE,
    TARGETS,
    TEXT_FONT_RE,
)
from xzbuild.model.types import IDF_SPEC_RE, NETWORK_CLASSES, parse_idf_spec

# What a kind's reader returns for a value it refused (the error is already recorded); the field keeps its default.
INVALID: Any = type("Invalid", (), {"__repr__": lambda self: "INVALID"})()

Reader = Callable[[Checker, Any, str], Any]


@dataclass(frozen=True)
class Kind:
    """How one key's value is read (``read(ck, value, path)``: the value for the field, or INVALID after
    recording errors) and the JSON Schema fragment that accepts what ``read`` accepts (exactly, but for the C
    syntax of config.h text, which only the loader scans: tests/model/test_schema_property.py). A ``late`` kind is
    read by boardfile itself (nested sections, or values that need the rest of the board)."""

    name: str
    read: Reader
    schema: dict[str, Any]
    late: bool = False


@dataclass(frozen=True)
class Key:
    """One key of a board-file mapping."""

    name: str
    kind: Kind
    doc: str
    fills: str  # "Class.field" of the typed result in xzbuild.model.types
    required: bool = False
    default: Any = None
    nullable: bool = False  # ``null`` is accepted and means the default
    hardware: bool = False  # the release matrix never reads it: load_boards(hardware=False) only syntax-checks it

    def schema(self) -> dict[str, Any]:
        """This key's JSON Schema (its kind's, documented, ``null`` allowed when nullable)."""
        frag = dict(self.kind.schema)
        if self.nullable:
            frag = {"anyOf": [frag, {"type": "null"}]}
        return {**frag, "description": self.doc}


@dataclass(frozen=True)
class Section:
    """A mapping of declared keys (the board file itself, a kconfig entry, a variant...)."""

    name: str
    keys: tuple[Key, ...]
    doc: str
    extra_schema: dict[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [k.name for k in self.keys]

    @property
    def required(self) -> list[str]:
        return [k.name for k in self.keys if k.required]

    def schema(self) -> dict[str, Any]:
        """The section as a closed JSON Schema object."""
        out: dict[str, Any] = {"type": "object", "additionalProperties": False,
                               "properties": {k.name: k.schema() for k in self.keys}}
        if self.required:
            out["required"] = self.required
        return {**out, **self.extra_schema}

    def fields(self, values: dict[str, Any]) -> dict[str, Any]:
        """``{field: value}`` of the keys read by their kind (keyword arguments of the typed result)."""
        return {key.fills.partition(".")[2]: values[key.name] for key in self.keys if not key.kind.late}

    def read(self, ck: Checker, raw: Any, path: str, empty_stops: bool = False) -> dict[str, Any] | None:
        """``{key name: value}`` for every declared key (defaults for absent or refused ones; keys boardfile reads
        itself only when present, raw); None when ``raw`` is not a mapping (or is empty, with ``empty_stops``).
        Required keys are read even when absent (the error says what is missing)."""
        data = ck.mapping(raw, path, self.names, required=self.required)
        if not data and (empty_stops or not isinstance(raw, dict)):
            return None
        out: dict[str, Any] = {}
        for key in self.keys:
            if key.name not in data and not key.required:
                if not key.kind.late:
                    out[key.name] = _fresh(key.default)
                continue
            value = data.get(key.name)
            if value is None and key.nullable:
                out[key.name] = _fresh(key.default)
                continue
            got = key.kind.read(ck, value, join(path, key.name))
            out[key.name] = _fresh(key.default) if got is INVALID else got
        return out


def _fresh(default: Any) -> Any:
    return type(default)() if isinstance(default, (list, dict)) else default


# --- kinds -----------------------------------------------------------------------------------------------------

def _string_schema(sink: str | None = None, pattern: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "maxLength": MAX_LEN}
    pattern = pattern or (schema_pattern(sink) if sink else None)
    if pattern:
        out["pattern"] = pattern
    return out


def text(sink: str) -> Kind:
    """A string valid for the sink ``sink`` (:mod:`xzbuild.core.sinks`)."""
    def read(ck: Checker, value: Any, path: str) -> Any:
        got = ck.text(value, path, sink)
        return INVALID if got is None else got
    return Kind(sink, read, _string_schema(sink))


def _typed(kind: type) -> Reader:
    def read(ck: Checker, value: Any, path: str) -> Any:
        got = ck.typed(value, path, kind)
        return INVALID if got is None else got
    return read


BOOL = Kind("bool", _typed(bool), {"type": "boolean"})


def _anchored(rx: re.Pattern[str]) -> str:
    """A ``^...\\Z`` regex of the model as a JSON Schema pattern."""
    body = rx.pattern.removeprefix("^").removesuffix(r"\Z")
    return f"^(?:{body})$(?!\\n)"


def matching(name: str, rx: re.Pattern[str], message: Callable[[str], str]) -> Kind:
    """A string that ``rx`` matches; else ``path: message(value)`` (the rule's own wording)."""
    def read(ck: Checker, value: Any, path: str) -> Any:
        got = ck.typed(value, path, str)
        if got is None:
            return INVALID
        if not rx.match(got) or len(got) > MAX_LEN:
            ck.error(path, message(got))
            return INVALID
        return got
    return Kind(name, read, _string_schema(pattern=_anchored(rx)))


def one_of(name: str, values: Sequence[str], message: Callable[[str], str]) -> Kind:
    """A string out of ``values``; else ``path: message(value)``."""
    def read(ck: Checker, value: Any, path: str) -> Any:
        got = ck.typed(value, path, str)
        if got is None:
            return INVALID
        if got not in values:
            ck.error(path, message(got))
            return INVALID
        return got
    return Kind(name, read, {"enum": list(values)})


def string_list(sink: str) -> Kind:
    """A list of strings, each valid for ``sink``."""
    def read(ck: Checker, value: Any, path: str) -> Any:
        return ck.string_list(value, path, sink)
    return Kind(f"list of {sink}", read, {"type": "array", "items": _string_schema(sink)})


def custom(name: str, read: Reader, schema: dict[str, Any]) -> Kind:
    """A kind with its own reader (structures the generic kinds do not cover)."""
    return Kind(name, read, schema)


def _gpio_list(ck: Checker, value: Any, path: str) -> Any:
    if not isinstance(value, list):
        ck.error(path, f"expected a list of GPIO numbers, got {describe(value)}")
        return INVALID
    pins = []
    for i, pin in enumerate(value):
        if isinstance(pin, int) and not isinstance(pin, bool) and pin >= 0:
            pins.append(pin)
        else:
            ck.error(join(path, i), f"expected a GPIO number, got {describe(pin)}")
    return pins


GPIO_LIST = custom("list of GPIO numbers", _gpio_list, {"type": "array", "items": {"type": "integer", "minimum": 0}})

MAX_COLUMN = 200


def _columns(ck: Checker, raw: Any, path: str) -> Any:
    """``config_h_columns``: macro -> value column (int) or one column per occurrence (list of ints)."""
    out: dict[str, list[int]] = {}
    if not isinstance(raw, dict):
        ck.error(path, f"expected a mapping of macro name -> column, got {describe(raw)}")
        return out
    for name, value in raw.items():
        sub = join(path, str(name))
        cols = value if isinstance(value, list) else [value]
        if not isinstance(name, str) or problem("c_ident", name):
            ck.error(sub, f"{describe(name)} is not a C macro name", key=True)
        elif not cols or any(isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= MAX_COLUMN for c in cols):
            ck.error(sub, f"expected a column 0..{MAX_COLUMN} or a list of them, got {describe(value)}")
        else:
            out[str(name)] = list(cols)
    return out


_COLUMN = {"type": "integer", "minimum": 0, "maximum": MAX_COLUMN}
COLUMNS = custom("macro -> column(s)", _columns, {
    "type": "object", "propertyNames": {"pattern": schema_pattern("c_ident")},
    "additionalProperties": {"oneOf": [_COLUMN, {"type": "array", "items": _COLUMN, "minItems": 1}]}})


def _idf(ck: Checker, value: Any, path: str) -> Any:
    got = ck.typed(value, path, str)
    if got is None:
        return INVALID
    try:
        return parse_idf_spec(got), got
    except ValueError as exc:
        ck.error(path, f"invalid ESP-IDF version expression {describe(got)}: {exc}")
        return INVALID


IDF_VERSION = custom("ESP-IDF version comparison", _idf, _string_schema(pattern=_anchored(IDF_SPEC_RE)))

SDK_KEY_RE = re.compile(r"[A-Za-z0-9_]+")


def _sdkconfig(ck: Checker, raw: Any, path: str) -> Any:
    if not isinstance(raw, dict):
        ck.error(path, f"expected a mapping of Kconfig key (without CONFIG_) to value, got {describe(raw)}")
        return INVALID
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


SDKCONFIG = custom("Kconfig key -> value", _sdkconfig, {
    "type": "object",
    "propertyNames": {"pattern": f"^(?!CONFIG_){(schema_pattern('sdkconfig_key') or '').removeprefix('^')}"},
    "additionalProperties": {"anyOf": [{"type": "integer"}, _string_schema("sdkconfig_value")]}})
UNPREFIXED_RE = re.compile(r"[A-Za-z0-9_]+=")


def _unprefixed(ck: Checker, raw: Any, path: str) -> Any:
    """``KEY=value`` lines upstream wrote without CONFIG_ (sdkconfig ignores them); kept verbatim so the
    build sees what upstream's did, and `boards kconfig-check` warns about each."""
    lines = []
    for i, line in enumerate(ck.string_list(raw, path)):
        if line.startswith("CONFIG_") or not UNPREFIXED_RE.match(line):
            ck.error(join(path, i), f"{describe(line)}: expected KEY=value without CONFIG_ (lines with the prefix "
                                    "go under sdkconfig)")
        elif ck.sink_ok(line.partition("=")[2], join(path, i), "sdkconfig_value"):
            lines.append(line)
    return lines


UNPREFIXED = custom("KEY=value lines", _unprefixed, {"type": "array", "items": _string_schema(
    pattern=f"^(?!CONFIG_){UNPREFIXED_RE.pattern}{(schema_pattern('sdkconfig_value') or '').removeprefix('^')}")})


def _build_options(ck: Checker, raw: Any, path: str) -> Any:
    if not isinstance(raw, dict):
        ck.error(path, f"expected a mapping, got {describe(raw)}")
        return INVALID
    for key, value in raw.items():
        if not isinstance(value, (bool, str)):
            ck.error(join(path, key), f"expected true/false or a choice string, got {describe(value)}")
    return dict(raw)


BUILD_OPTIONS = custom("option -> true/false or choice", _build_options,
                       {"type": "object", "additionalProperties": {"type": ["boolean", "string"]}})


def _extra_cmake(ck: Checker, raw: Any, path: str) -> Any:
    if not isinstance(raw, dict):
        ck.error(path, f"expected a mapping of CMake variable to value, got {describe(raw)}")
        return INVALID
    out: dict[str, str] = {}
    for k, v in raw.items():
        if not isinstance(k, str):
            ck.error(join(path, str(k)), "expected a CMake variable name", key=True)
        elif ck.sink_ok(k, join(path, k), "cmake_variable", key=True) and ck.text(v, join(path, k), "cmake_arg") is not None:
            out[k] = v
    return out


EXTRA_CMAKE = custom("CMake variable -> argument", _extra_cmake, {
    "type": "object", "propertyNames": {"pattern": schema_pattern("cmake_variable")},
    "additionalProperties": _string_schema("cmake_arg")})


def _target_message(value: str) -> str:
    return f"unknown target {describe(value)}; use one of {', '.join(TARGETS)}"


TARGET = one_of("target", TARGETS, _target_message)
IDENT = matching("variant_name", IDENT_RE, lambda v: f"'{v}' must match ^[a-z0-9.-]+$ (lowercase, digits, '.', '-') "
                                                    "and start with a letter or digit")
VARIANT_NAME = matching("variant_name", IDENT_RE, lambda v: f"'{v}' must match ^[a-z0-9.-]+$ and start with a letter "
                                                           "or digit (it names directories and command-line words)")
CODEC_RE = re.compile(r"[A-Z0-9]{2,10}(?: \+ [A-Z0-9]{2,10})*(?: or [A-Z0-9]{2,10}(?: \+ [A-Z0-9]{2,10})*)*")
CODEC = matching("codec chips", re.compile(CODEC_RE.pattern + r"\Z"), lambda v: (
    f"invalid codec {describe(v)}; write chip names joined by ' + ', alternatives by ' or ' (e.g. \"ES8311 + ES7210\")"))
NETWORK = one_of("network class", list(NETWORK_CLASSES.values()), lambda v: (
    f"unknown network {describe(v)}; use one of {', '.join(NETWORK_CLASSES.values())} (the board class's base in the "
    "firmware sources)"))
DISPLAY_MODEL = one_of("display model", ["oled", "lcd"], lambda v: f"expected 'oled' or 'lcd', got {describe(v)}")
BOARD_SYMBOL = matching("board_symbol", SYMBOL_RE, lambda v: f"'{v}' must look like BOARD_TYPE_<NAME> (no CONFIG_)")
TEXT_FONT = matching("text font", TEXT_FONT_RE, lambda v: f"'{v}' must match font_noto_sans_basic_<size>_<bpp>")
ICON_FONT = matching("icon font", ICON_FONT_RE, lambda v: f"'{v}' must match font_material_symbols_<size>_<bpp>")


def _label(ck: Checker, value: Any, path: str) -> Any:
    """The Kconfig prompt of a board: one printable line, English (CJK only as a trailing parenthetical),
    without quotes or backslashes (upstream's scripts read it unescaped) and without stale spellings."""
    got = ck.typed(value, path, str)
    if got is None:
        return INVALID
    ok = ck.sink_ok(got, path, "kconfig_prompt")
    if ok and ('"' in got or "\\" in got):
        ck.error(path, "labels may not contain '\"' or '\\'; reword the label")
        ok = False
    elif ok and not LABEL_RE.match(got):
        ck.error(path, "labels are English; Chinese text is allowed only as one trailing parenthetical, e.g. "
                       "'Foo Board (面包板)'")
        ok = False
    for word in STALE_LABEL_WORDS:
        if word in got:
            ck.error(path, f"stale spelling '{word}' is not allowed in labels")
            ok = False
    return got if ok else INVALID


def _label_schema() -> dict[str, Any]:
    stale = "|".join(re.sub(r"([\\^$.*+?()[\]{}|/])", r"\\\1", w) for w in STALE_LABEL_WORDS)  # ECMA-262 escapes
    return {"type": "string", "maxLength": MAX_LEN, "allOf": [
        {"pattern": schema_pattern("kconfig_prompt")}, {"pattern": _anchored(LABEL_RE)},
        {"not": {"pattern": f"[\"\\\\]|{stale}"}}]}


LABEL = custom("kconfig_prompt", _label, _label_schema())


# --- the sections ------------------------------------------------------------------------------------------------

def _late(name: str, schema: dict[str, Any]) -> Kind:
    """A kind boardfile reads itself; Section.read passes the raw value on, and only when the file has the key."""
    return Kind(name, lambda ck, value, path: value, schema, late=True)


SOURCE_FACTS = Section("source_facts", (
    Key("lcd_display", BOOL, "The sources construct an LcdDisplay class (display_style/multiline_chat are offered).",
        "SourceFacts.lcd_display", default=False),
    Key("wifi_board", BOOL, "The board class is a WifiBoard (wifi_provisioning is offered unless esp32p4).",
        "SourceFacts.wifi_board", default=False),
    Key("camera", BOOL, "The sources construct a camera (the camera mirror options are offered).",
        "SourceFacts.camera", default=False),
    Key("network", NETWORK, "The base of the board class DECLARE_BOARD names (wifi, ml307, nt26, dual, rndis, ethernet).",
        "SourceFacts.network", default=""),
    Key("codec", CODEC, "The chips the constructed codec class drives (\"ES8311 + ES7210\"; ' or ' between "
        "alternatives).", "SourceFacts.codec", default=""),
), "Facts upstream's build.py derives from the board's C/C++ sources.")

KCONFIG = Section("kconfig", (
    Key("symbol", BOARD_SYMBOL, "The BOARD_TYPE_<NAME> symbol, without CONFIG_.", "KconfigEntry.symbol",
        required=True, default=""),
    Key("label", LABEL, "The Kconfig prompt (English; CJK only as one trailing parenthetical).", "KconfigEntry.label",
        required=True, default=""),
    Key("target", TARGET, "The chip its 'depends on IDF_TARGET_*' names.", "KconfigEntry.target", required=True,
        default=""),
    Key("text_font", TEXT_FONT, "LVGL text font the CMake branch sets (font_noto_sans_basic_<size>_<bpp>).",
        "KconfigEntry.text_font", nullable=True),
    Key("icon_font", ICON_FONT, "Icon font the CMake branch sets (font_material_symbols_<size>_<bpp>).",
        "KconfigEntry.icon_font", nullable=True),
    Key("emoji_collection", text("cmake_word"), "Emoji collection the CMake branch sets.",
        "KconfigEntry.emoji_collection", nullable=True),
    Key("emote_resolution", text("cmake_word"), "Emote asset resolution the CMake branch sets.",
        "KconfigEntry.emote_resolution", nullable=True),
    Key("extra_cmake", EXTRA_CMAKE, "Other set() variables of the CMake branch, verbatim.",
        "KconfigEntry.extra_cmake", default={}),
    Key("device_aec", BOOL, "The symbol is in USE_DEVICE_AEC's depends list.", "KconfigEntry.device_aec",
        default=False),
    Key("emote_style", BOOL, "The symbol is in USE_EMOTE_MESSAGE_STYLE's depends list.", "KconfigEntry.emote_style",
        default=False),
    Key("display_model", DISPLAY_MODEL, "The display-model choice (DISPLAY_OLED_TYPE / DISPLAY_LCD_TYPE) it is in.",
        "KconfigEntry.display_model_choice", nullable=True),
    Key("target_default", BOOL, "The default BOARD_TYPE of its target.", "KconfigEntry.target_default",
        default=False),
    Key("kconfig_extra", string_list("free_text"), "Names of board-private Kconfig blocks (firmware facts).",
        "KconfigEntry.kconfig_extra", default=[]),
    Key("cmake_hooks", string_list("cmake_word"), "Extra IDF components (MAIN_PRIV_REQUIRES_EXTRA).",
        "KconfigEntry.cmake_hooks", default=[]),
    Key("camera_mirror_dynamic", BOOL, "build.py's _DYNAMIC_CAMERA_MIRROR_BOARD_CONFIGS holds it.",
        "KconfigEntry.camera_mirror_dynamic", default=False),
    Key("camera_enable_symbol", text("kconfig_symbol"), "build.py's _OPTIONAL_CAMERA_ENABLE_SYMBOLS entry.",
        "KconfigEntry.camera_enable_symbol", nullable=True),
), "One config BOARD_TYPE_<SYMBOL> entry of the BOARD_TYPE choice plus its CMake chain branch.")

P4X = Section("p4x", (
    Key("name", VARIANT_NAME, "OTA BOARD_NAME of the P4X twin; globally unique.", "Variant.name", required=True,
        default=""),
    Key("legacy_names", string_list("legacy_name"), "Earlier names of the twin.", "Variant.legacy_names",
        default=[]),
    Key("idf_version", IDF_VERSION, "The twin's ESP-IDF comparison (default: the entry's).", "Variant.idf_version",
        nullable=True),
), "ESP32-P4X (rev >= 3) twin; the entry itself is the rev < 3 build.")

VARIANT = Section("variants", (
    Key("name", VARIANT_NAME, "OTA BOARD_NAME; globally unique.", "Variant.name", required=True, default=""),
    Key("legacy_names", string_list("legacy_name"), "Earlier names (kept for OTA and release links).",
        "Variant.legacy_names", default=[]),
    Key("idf_version", IDF_VERSION, "One comparison against the ESP-IDF version, e.g. '>=6.1' or '<6.0'.",
        "Variant.idf_version", nullable=True),
    Key("build_options", BUILD_OPTIONS, "Overrides of derived build-option defaults.", "Variant.build_options",
        default={}),
    Key("sdkconfig", SDKCONFIG, "sdkconfig_append as an ordered map, keys without CONFIG_.",
        "Variant.sdkconfig_append", default=[]),
    Key("sdkconfig_unprefixed", UNPREFIXED, "Lines upstream wrote without CONFIG_ (ignored by sdkconfig), kept "
        "verbatim; `boards kconfig-check` warns about them.", "Variant.sdkconfig_append", default=[]),
    Key("p4x", _late("P4X twin", P4X.schema()), P4X.doc, "Variant.chip_variant"),
), "One release build (config.json builds[]).")

BOARD = Section("board", (
    Key("type", IDENT, "OTA BOARD_TYPE; unique across boards.", "Board.type", required=True, default=""),
    Key("manufacturer", text("manufacturer"), "The directory of a nested board file (forbidden for flat ones).",
        "Board.manufacturer"),
    Key("dir", _late("firmware dir", _string_schema(pattern=_anchored(re.compile(
        r"[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?")))),
        "The firmware dir under main/boards when its name is no board file name (capitals); the file is then its "
        "lower-cased name.", "Board.dir"),
    Key("target", TARGET, "The chip (IDF_TARGET).", "Board.target", required=True, default=""),
    Key("preview", BOOL, "The target is an ESP-IDF preview target: built with idf.py --preview (config.json preview).", "Board.preview", default=False),
    Key("config_json", BOOL, "false for dirs upstream keeps without config.json.", "Board.has_config_json",
        default=True),
    Key("sources", text("file_name"), "'custom' (hand-written sources stay in the firmware tree) or an archetype "
        "template name.", "Board.sources", default="custom"),
    Key("source_facts", _late("source facts", SOURCE_FACTS.schema()), SOURCE_FACTS.doc, "Board.source_facts"),
    Key("kconfig", _late("list of kconfig entries", {"type": "array", "items": KCONFIG.schema()}),
        "The BOARD_TYPE symbols whose CMake branch points at this dir, in CMake-chain order.", "Board.kconfig",
        default=[]),
    Key("variants", _late("list of variants", {"type": "array", "items": VARIANT.schema()}),
        "The release builds, in config.json builds[] order.", "Board.variants", default=[]),
    Key("hardware", _late("hardware parts", {"$ref": "#/$defs/hardware"}),
        "Structured config.h fields, part -> field -> value (xzbuild/parts).", "Board.hardware", default={}, hardware=True),
    Key("shared_gpios", GPIO_LIST, "GPIOs the board deliberately uses for more than one signal.",
        "Board.shared_gpios", default=[], hardware=True),
    Key("acknowledged_pins", GPIO_LIST, "Flash/PSRAM pins of the chip that this board's module leaves free and "
        "uses anyway (silences the warning).", "Board.acknowledged_pins", default=[], hardware=True),
    Key("config_h_guard", text("c_macro"), "The header's include guard macro.", "Board.config_h_guard",
        nullable=True, hardware=True),
    Key("config_h_guard_end", text("c_endif_tail"), "Text after the guard's #endif.", "Board.config_h_guard_end",
        nullable=True, hardware=True),
    Key("config_h", _late("config.h items", {"type": "array", "items": {"$ref": "#/$defs/config_h_item"}}),
        "The header's item tree: define/include/raw/branches/hardware.", "Board.config_h", default=[], hardware=True),
    Key("config_h_columns", COLUMNS, "Value column of a macro's #define as the board aligned it (one per "
        "occurrence).", "Board.config_h_columns", default={}, hardware=True),
    Key("config_h_comment_columns", COLUMNS, "Column of a macro's trailing comment as the board aligned it (one per "
        "occurrence).", "Board.config_h_comment_columns", default={}, hardware=True),
    Key("config_h_final_newline", BOOL, "false: the header ends without a newline.", "Board.config_h_final_newline",
        default=True, hardware=True),
    Key("config_h_crlf", BOOL, "true: the header has CRLF line endings.", "Board.config_h_crlf", default=False, hardware=True),
), "One board file = one upstream main/boards/<dir>/.", extra_schema={
    # A P4/P4X pair (a variant with p4x) needs target esp32p4.
    "if": {"required": ["variants"], "properties": {"variants": {"contains": {"type": "object", "required": ["p4x"]}}}},
    "then": {"properties": {"target": {"const": "esp32p4"}}}})

SECTIONS = (BOARD, SOURCE_FACTS, KCONFIG, VARIANT, P4X)
# Top-level keys the release matrix never reads: load_boards(hardware=False) only syntax-checks them.
HARDWARE_KEYS = tuple(key.name for key in BOARD.keys if key.hardware)


def _default_text(key: Key) -> str:
    if key.required:
        return "required"
    if key.default is None or key.default in ([], {}, ""):
        return "—"
    return f"`{str(key.default).lower() if isinstance(key.default, bool) else key.default}`"


def key_table() -> str:
    """The board-file key table of docs/board-model.md, as Markdown (one table per section); print it with
    ``python -c 'from xzbuild.model.keys import key_table; print(key_table(), end="")'``."""
    lines: list[str] = []
    for section in SECTIONS:
        where = {"board": "top level", "kconfig": "`kconfig[]`", "variants": "`variants[]`",
                 "p4x": "`variants[].p4x`", "source_facts": "`source_facts`"}[section.name]
        lines += [f"{where} — {section.doc}", "", "| key | kind | default | fills | meaning |", "|---|---|---|---|---|"]
        for key in section.keys:
            null = " or null" if key.nullable else ""
            fills = f"`{key.fills}`" if key.fills else ""
            lines.append(f"| `{key.name}` | {key.kind.name}{null} | {_default_text(key)} | {fills} | "
                         f"{key.doc.replace('|', '/')} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"

