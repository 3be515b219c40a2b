"""The JSON Schema (validated by the `jsonschema` library) and the loader accept and refuse the same board files.

Documents are built from the key declarations (xzbuild/model/keys.py): every section's keys, each with a value
from the hand-written samples of its kind below, then, for most documents, one mutation: a value replaced by a
wrong type or by a near miss of a valid string (a trailing newline, a leading '-' or '.', a space, a bidi or
zero-width character, a '$(', another case...), an unknown key, a required key removed, a bad map key. The loader
is ``board_from_doc`` (all per-file rules); rules between files (unique names, the manufacturer's directory) are
not the schema's business and are not generated.

Out of the generated space, stated: the ``hardware`` and ``config_h`` subtrees are used only whole (a valid pair,
or replaced by a wrong type), since their C text (define values, raw blocks) only the loader scans; a value that is
a float with an integral value (``2.0``: JSON Schema counts it as an integer); characters outside the Basic
Multilingual Plane (the schema's unprintable class covers the BMP). ``dir`` is only generated as what this file
name allows or as a malformed name (which file a dir belongs in depends on the file's path).
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.model.factory import WIFI_BOARD
from tests.model.test_property_mutations import _paths as every_path
from xzbuild.core.errors import UserError
from xzbuild.core.yamlmarks import load_marked
from xzbuild.model.boardfile import board_from_doc
from xzbuild.model.keys import BOARD, KCONFIG, P4X, SECTIONS, SOURCE_FACTS, VARIANT, Section
from xzbuild.model.schema import board_schema

FILE = "demo-board"  # the board file the documents are written to (boards/demo-board.yaml)
_FIXTURE = yaml.safe_load(WIFI_BOARD)
_HARDWARE_PAIR = {"hardware": _FIXTURE["hardware"], "config_h": _FIXTURE["config_h"]}

# Map keys that break one rule each (a Kconfig constant, the CONFIG_ prefix, a '-', a leading digit, a newline).
MAP_KEY_MISSES = ["y", "n", "CONFIG_X", "A-B", "1X", "X\n"]
# Valid values per kind, written from docs/board-model.md and docs/limits.md (not read from the code), and for
# maps some keys of MAP_KEY_MISSES.
SAMPLES: dict[str, Any] = {
    "bool": st.booleans(),
    "target": st.sampled_from(["esp32", "esp32c3", "esp32c5", "esp32c6", "esp32s3", "esp32p4", "esp32s31"]),
    "variant_name": st.sampled_from(["demo-board", "a", "x1.2-b", "9lives"]),
    "manufacturer": st.sampled_from(["acme", "a-1", "m5stack"]),
    "firmware dir": st.sampled_from(["Demo-Board", "DEMO-BOARD"]),
    "file_name": st.sampled_from(["custom", "lcd_spi-2"]),
    "source facts": st.none(),  # built from SOURCE_FACTS below
    "list of kconfig entries": st.none(),
    "list of variants": st.none(),
    "P4X twin": st.none(),
    "hardware parts": st.none(),  # the fixture's pair
    "config.h items": st.none(),
    "list of GPIO numbers": st.lists(st.integers(0, 60), max_size=3),
    "c_macro": st.sampled_from(["_BOARD_CONFIG_H_", "G1", "a"]),
    "c_endif_tail": st.sampled_from(["// _BOARD_CONFIG_H_", "/* end */", "", "  // x"]),
    "macro -> column(s)": st.dictionaries(st.sampled_from(["DISPLAY_WIDTH", "_X", "a1", *MAP_KEY_MISSES]),
                                          st.one_of(st.integers(0, 200), st.lists(st.integers(0, 200), min_size=1,
                                                                                  max_size=3)), max_size=2),
    "network class": st.sampled_from(["wifi", "ml307", "nt26", "dual", "rndis", "ethernet"]),
    "codec chips": st.sampled_from(["ES8311", "ES8311 + ES7210", "I2S", "ES8311 or ES8388 + ES7210"]),
    "board_symbol": st.sampled_from(["BOARD_TYPE_DEMO", "BOARD_TYPE_x_1"]),
    "kconfig_prompt": st.sampled_from(["Demo Board", "Foo Board (面包板)", "ESP32-S3 DevKit 1.28"]),
    "text font": st.sampled_from(["font_noto_sans_basic_14_1", "font_noto_sans_basic_30_4"]),
    "icon font": st.sampled_from(["font_material_symbols_14_1", "font_material_symbols_20_4"]),
    "cmake_word": st.sampled_from(["small", "800x480", "a/b:c", "twemoji_64"]),
    "CMake variable -> argument": st.dictionaries(st.sampled_from(["LVGL_X", "_Y", "z9", *MAP_KEY_MISSES]), st.sampled_from(
        ["${FONT_A}", '"quoted ${V} text"', "word", '""']), max_size=2),
    "display model": st.sampled_from(["oled", "lcd"]),
    "list of free_text": st.lists(st.sampled_from(["BOARD_TYPE_X_MENU", "any text\there"]), max_size=2),
    "list of cmake_word": st.lists(st.sampled_from(["espressif__esp_lcd_touch", "x"]), max_size=2),
    "kconfig_symbol": st.sampled_from(["USB_HOST_ENABLE", "CAM1"]),
    "list of legacy_name": st.lists(st.sampled_from(["old_name.v1", "x-2"]), max_size=2),
    "ESP-IDF version comparison": st.sampled_from([">=6.1", "<6.0", " == v5.5.2 ", "<=5.4"]),
    "option -> true/false or choice": st.dictionaries(st.sampled_from(["display_style", "aec_mode"]),
                                                      st.one_of(st.booleans(), st.sampled_from(["wechat", "device"])),
                                                      max_size=2),
    "Kconfig key -> value": st.dictionaries(st.sampled_from(["SPIRAM", "FLASH_4", "NAME", "a_b", "N2", *MAP_KEY_MISSES]), st.sampled_from(
        ["y", "n", 4, -3, '"a b"', '"esc \\" \\\\"', "0x1F", "word_1.2", "-7"]), max_size=3),
    "KEY=value lines": st.lists(st.sampled_from(["LCD_X=y", "A_B=12", 'S="a"']), max_size=2),
}

# Replacements for any value: wrong types and, for strings, near misses of the valid value.
WRONG = [None, True, False, 0, 7, -1, 201, 1.5, "", "x", [], [1], ["a"], {}, {"a": 1}, {"z": "y"}]
NEAR = [lambda s: s + "\n", lambda s: "-" + s, lambda s: "." + s, lambda s: s + " ", lambda s: " " + s,
        lambda s: s + "\u202e", lambda s: "\u200b" + s, lambda s: s.upper(), lambda s: s.lower(), lambda s: s + "$(x)",
        lambda s: s + "\t", lambda s: s.replace(" ", "\n"), lambda s: s + '"', lambda s: s + "\\", lambda s: s + "_",
        lambda s: "CONFIG_" + s, lambda s: s + "\x00", lambda s: s[:-1], lambda s: s + "演", lambda s: s * 2]
BAD_KEYS = ["", "y", "n", "CONFIG_X", "a-b", "1A", "x\n", "unknown_key", "Type", "\u202ex"]

_VALIDATOR = jsonschema.Draft202012Validator(board_schema())
SEEN: Counter[str] = Counter()


@st.composite
def section(draw: st.DrawFn, sec: Section) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in sec.keys:
        if not key.required and not draw(st.booleans()):
            continue
        if key.nullable and draw(st.integers(0, 5)) == 0:
            out[key.name] = None
            continue
        out[key.name] = draw(_value(key.kind.name))
    return out


def _value(kind: str) -> st.SearchStrategy[Any]:
    nested = {"source facts": section(SOURCE_FACTS), "P4X twin": section(P4X),
              "list of kconfig entries": st.lists(section(KCONFIG), max_size=2),
              "list of variants": st.lists(section(VARIANT), max_size=2)}
    return nested.get(kind, SAMPLES[kind])


@st.composite
def board_documents(draw: st.DrawFn) -> dict[str, Any]:
    doc = draw(section(BOARD))
    doc.pop("hardware", None), doc.pop("config_h", None)
    if draw(st.booleans()):
        doc.update(copy.deepcopy(_HARDWARE_PAIR))
    action = draw(st.sampled_from(["none", "none", "replace", "replace", "near", "add", "drop", "key"]))
    # Paths inside hardware/config_h are left alone: their C text is the loader's (module docstring).
    paths = [p for p in every_path(doc) if p and not (len(p) > 1 and p[0] in _HARDWARE_PAIR)]
    if action == "none" or not paths:
        return doc
    path = draw(st.sampled_from(paths))
    parent: Any = doc
    for part in path[:-1]:
        parent = parent[part]
    old = parent[path[-1]]
    if action == "replace":
        parent[path[-1]] = draw(st.sampled_from(WRONG))
    elif action == "near" and isinstance(old, str) and old:
        parent[path[-1]] = draw(st.sampled_from(NEAR))(old)
    elif action == "add" and isinstance(parent, dict):
        parent[draw(st.sampled_from(BAD_KEYS))] = old
    elif action == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
    elif action == "key" and isinstance(parent, dict):
        parent[draw(st.sampled_from(BAD_KEYS))] = parent.pop(path[-1])
    return doc


def loader_accepts(doc: dict[str, Any]) -> tuple[bool, list[str]]:
    """board_from_doc's verdict on ``doc`` written as boards/demo-board.yaml (ASCII YAML, escapes for the rest)."""
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=False)
    try:
        marked = load_marked(Path(f"{FILE}.yaml"), text=text)
    except UserError as exc:
        return False, [str(exc)]
    _, ck = board_from_doc(marked, FILE)
    return not ck.errors, [str(e) for e in ck.errors]


def test_every_declared_kind_has_samples() -> None:
    kinds = {key.kind.name for sec in SECTIONS for key in sec.keys}
    assert kinds <= set(SAMPLES), sorted(kinds - set(SAMPLES))


def test_schema_and_loader_agree_on_generated_documents() -> None:
    _agree(400)


@pytest.mark.slow
def test_schema_and_loader_agree_on_many_generated_documents() -> None:
    _agree(5000)


def _agree(examples: int) -> None:
    SEEN.clear()

    @settings(max_examples=examples, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(board_documents())
    def agree(doc: dict[str, Any]) -> None:
        loaded, errors = loader_accepts(doc)
        schema_errors = [e.message for e in _VALIDATOR.iter_errors(doc)]
        SEEN["accepted" if loaded else "refused"] += 1
        assert loaded == (not schema_errors), (doc, errors, schema_errors[:3])

    agree()
    # Both verdicts are well represented (the property is not won by refusing, or accepting, everything).
    assert SEEN["accepted"] >= examples // 5 and SEEN["refused"] >= examples // 5, SEEN


REPO = Path(__file__).resolve().parents[2]
BREAD = "bread-compact-wifi"


def _at(*path: Any, value: Any) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        node: Any = doc
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    return edit


# Where schema and loader disagreed before the declarations (issue 43), each with the verdict docs/board-model.md
# and docs/limits.md give: (id, edit of the committed bread-compact-wifi, accepted?, the loader's message or "").
DISAGREEMENTS = [
    ("sdkconfig-key-y", _at("variants", 0, "sdkconfig", value={"y": "y"}), False, "not 'y' or 'n'"),
    ("sdkconfig-key-config-prefix", _at("variants", 0, "sdkconfig", value={"CONFIG_SPIRAM": "y"}), False,
     "write the key without the CONFIG_ prefix"),
    ("sdkconfig-value-two-words", _at("variants", 0, "sdkconfig", value={"X": "a b"}), False, "a decimal or 0x hex"),
    ("codec-trailing-newline", _at("source_facts", "codec", value="ES8311\n"), False, "invalid codec"),
    ("type-trailing-newline", _at("type", value=f"{BREAD}\n"), False, "start with a letter or digit"),
    ("type-dotdot", _at("type", value=".."), False, "start with a letter or digit"),
    ("manufacturer-leading-dash", _at("manufacturer", value="-acme"), False, "starting with a letter or digit"),
    ("legacy-name-flag", _at("variants", 0, "legacy_names", value=["--force"]), False, "starting with a letter"),
    ("idf-version-fullwidth-digit", _at("variants", 0, "idf_version", value=">=\uff16.1"), False,
     "invalid ESP-IDF version expression"),
    ("idf-version-newline", _at("variants", 0, "idf_version", value=">=6.0\n"), False,
     "invalid ESP-IDF version expression"),
    ("column-over-200", _at("config_h_columns", value={"X": 201}), False, "expected a column 0..200"),
    ("column-empty-list", _at("config_h_columns", value={"X": []}), False, "expected a column 0..200"),
    ("guard-null", _at("config_h_guard", value=None), True, ""),
    ("guard-include", _at("config_h_guard", value='_G_\n#include "/etc/passwd"'), False, "a macro name"),
    ("text-font-null", _at("kconfig", 0, "text_font", value=None), True, ""),
    ("display-model-null", _at("kconfig", 0, "display_model", value=None), True, ""),
    ("kconfig-target-unknown", _at("kconfig", 0, "target", value="esp32s9"), False, "unknown target \"esp32s9\""),
    ("p4x-on-esp32s3", _at("variants", 0, "p4x", value={"name": "bread-compact-wifi-p4x"}), False,
     "a P4/P4X pair needs target esp32p4"),
    ("label-quote", _at("kconfig", 0, "label", value='Bread "Compact"'), False, "labels may not contain"),
    ("label-cjk", _at("kconfig", 0, "label", value="演示 Board"), False, "labels are English"),
    ("sources-path", _at("sources", value="../x"), False, "a file name"),
    ("emoji-collection-space", _at("kconfig", 0, "emoji_collection", value="a b"), False, "a CMake word"),
    ("extra-cmake-key", _at("kconfig", 0, "extra_cmake", value={"A-B": "1"}), False, "a CMake variable name"),
    ("include-absolute", lambda d: d["config_h"].append({"include": '"/etc/passwd"'}), False, "a header as"),
    ("branches-negative-indent", lambda d: d["config_h"].append({"branches": [{"when": "ifdef X"}], "indent": -2}),
     False, "expected a number of spaces (0 or more), got -2"),
    ("branches-empty", lambda d: d["config_h"].append({"branches": []}), False, "expected at least one branch"),
]


@pytest.mark.parametrize(("edit", "accepted", "message"), [row[1:] for row in DISAGREEMENTS],
                         ids=[row[0] for row in DISAGREEMENTS])
def test_former_disagreements(edit: Any, accepted: bool, message: str) -> None:
    doc = yaml.safe_load((REPO / "boards" / f"{BREAD}.yaml").read_text(encoding="utf-8"))
    edit(doc)
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=False)
    _, ck = board_from_doc(load_marked(Path(f"{BREAD}.yaml"), text=text), BREAD)
    errors = [str(e) for e in ck.errors]
    assert _VALIDATOR.is_valid(doc) is accepted
    assert (not errors) is accepted, errors
    assert all(message in e for e in errors), errors  # one rule broken, that rule's message


PROBES = ["", "a", "A_1", "BOARD_TYPE_X", "y", "n", "x\n", "\n", " a", "a ", "-a", ".a", "a b", '"q"', '"a\\"b"',
          "0x1F", "-3", "font_noto_sans_basic_14_1", "ES8311 + ES7210", ">=6.1", " == v5.5.2 ", ">=\uff16.1", "\u202e",
          "a\u200b", "演示 (面包板)", "// c", "/* c */", '"a.h"', "<a/b.h>", '"a.h" // x', "${X}", '"${X} y"', "if X",
          "else", "elif 1", "a\tb", "a\rb", "a\u2028b", "$(x)", "defined", "__x", "a\x00", "\xa0a", "a\\", "(a, b)",
          "LCD_X=y", 'S="a b"', "Foo (面包板)", "ALIENTEK x", "demo-board", "Demo-Board/x", "// c\n", " \n", "a\nb"]


def _patterns(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return own.union(*(_patterns(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_patterns(v) for v in node))
    return set()


def test_patterns_mean_the_same_in_javascript(tmp_path: Path) -> None:
    """Editors run the schema's patterns in JavaScript (ECMA-262, unicode mode), `jsonschema` and the loader in
    Python: each pattern compiles in Node and gives Node's verdict on every probe string."""
    import re
    import shutil
    import subprocess

    node = shutil.which("node")
    assert node, "node is required (Debian's nodejs, which npm comes with)"
    patterns = sorted(_patterns(board_schema()))
    script = tmp_path / "probe.js"
    script.write_text("const [ps, ss] = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
                      "console.log(JSON.stringify(ps.map((p) => { let r; try { r = new RegExp(p, 'u'); }\n"
                      "  catch (e) { return String(e); } return ss.map((s) => r.test(s)); })));\n", encoding="utf-8")
    proc = subprocess.run([node, str(script)], input=json.dumps([patterns, PROBES]), capture_output=True, text=True,
                          timeout=60, check=True)
    verdicts = json.loads(proc.stdout)
    assert len(patterns) >= 30  # distinct patterns of the schema (2026-12: 32)
    for pattern, js in zip(patterns, verdicts, strict=True):
        assert isinstance(js, list), (pattern, js)
        python = [re.search(pattern, s) is not None for s in PROBES]
        assert python == js, (pattern, [(s, p) for s, p, j in zip(PROBES, python, js, strict=True) if p != j])
