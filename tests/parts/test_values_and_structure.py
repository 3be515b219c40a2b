"""Value kinds round-trip exactly; the importer only structures defines when that is provably safe."""

from __future__ import annotations

import pytest

from xzbuild.importer.configh import parse_config_h
from xzbuild.importer.structure import structure_header
from xzbuild.parts import MACRO_INDEX, PARTS, emit_hardware, values
from xzbuild.parts.items import Conditional, Define, HardwareSlot, Raw, render_items
from xzbuild.parts.preprocess import defined_macros, eval_condition


@pytest.mark.parametrize(("kind", "text", "value", "emitted"), [
    ("gpio", "GPIO_NUM_4", 4, "GPIO_NUM_4"),
    ("gpio", "(GPIO_NUM_48)", 48, "GPIO_NUM_48"),
    ("gpio", "GPIO_NUM_NC", "NC", "GPIO_NUM_NC"),
    ("gpio", "-1", -1, "-1"),
    ("gpio", "IO_EXPANDER_PIN_NUM_3", "IO_EXPANDER_PIN_NUM_3", "IO_EXPANDER_PIN_NUM_3"),
    ("gpio", "4", None, None),
    ("int", "(720)", 720, "720"),
    ("int", "(40 * 1000 * 1000)", 40000000, "40000000"),
    ("int", "0x20", 32, "32"),
    ("int", "LCD_WIDTH", "LCD_WIDTH", "LCD_WIDTH"),
    ("int", "010", None, None),
    ("int", "DISPLAY_WIDTH * 10", None, None),
    ("bool", "true", True, "true"),
    ("bool", "(false)", False, "false"),
    ("bool", "1", None, None),
    ("flag", "", True, ""),
    ("flag", "1", None, None),
    ("addr", "0x18", "0x18", "0x18"),
    ("addr", "ES8311_CODEC_DEFAULT_ADDR", "ES8311_CODEC_DEFAULT_ADDR", "ES8311_CODEC_DEFAULT_ADDR"),
    ("ident", "LCD_RGB_ELEMENT_ORDER_BGR", "LCD_RGB_ELEMENT_ORDER_BGR", "LCD_RGB_ELEMENT_ORDER_BGR"),
    ("ident", "true", None, None),
])
def test_kind_round_trip(kind: str, text: str, value: object, emitted: str | None) -> None:
    assert values.parse(kind, text) == value
    if emitted is not None:
        assert values.check(kind, value) is None
        assert values.emit(kind, value) == emitted
        assert values.normalize(values.emit(kind, value)) == values.normalize(text)


@pytest.mark.parametrize(("kind", "value", "problem"), [
    ("gpio", "240px", "expected a GPIO number"),
    ("gpio", -2, "expected a GPIO number"),
    ("gpio", True, "expected a GPIO number"),
    ("int", 1.5, "expected an integer"),
    ("bool", "yes please", "expected true or false"),
    ("flag", False, "expected true"),
    ("addr", 24, "expected a hex address"),
])
def test_kind_rejects(kind: str, value: object, problem: str) -> None:
    assert problem in (values.check(kind, value) or "")


def test_every_spelling_maps_to_one_field() -> None:
    assert len(MACRO_INDEX) == sum(len(f.macros) for p in PARTS.values() for f in p.fields)
    dc = PARTS["display"].field("dc")
    assert dc is not None and len(dc.macros) == 12
    for part in PARTS.values():
        schema = part.schema()
        assert set(schema["properties"]) == {f.name for f in part.fields} | {"macros", "parens", "verbatim", "notes"}


def test_board_spelling_is_kept() -> None:
    items = emit_hardware({"display": {"dc": 4, "width": 240, "macros": {"dc": "LCD_PIN_DC"},
                                       "notes": {"width": "panel"}}})
    assert render_items(items) == ["#define DISPLAY_WIDTH 240 // panel", "#define LCD_PIN_DC GPIO_NUM_4"]


def test_board_text_is_kept_token_for_token() -> None:
    items = emit_hardware({
        "display": {"width": 720, "spi_clock_hz": 40000000, "offset_y": 20,
                    "verbatim": {"width": "(720)", "spi_clock_hz": "(40 * 1000 * 1000)", "offset_y": "0x14"}},
        "touch": {"interrupt": 4, "reset": "NC", "parens": True},
    })
    assert render_items(items) == [
        "#define DISPLAY_WIDTH (720)", "#define DISPLAY_OFFSET_Y 0x14", "#define DISPLAY_SPI_SCLK_HZ (40 * 1000 * 1000)",
        "#define TP_PIN_NUM_INT (GPIO_NUM_4)", "#define TP_PIN_NUM_RST (GPIO_NUM_NC)",
    ]


@pytest.mark.parametrize(("kind", "value", "text", "parens", "problem"), [
    ("int", 720, "(720)", False, None),
    ("int", 20, "0x14", False, None),
    ("int", 40000000, "(40 * 1000 * 1000)", False, None),
    ("gpio", 4, "( GPIO_NUM_4 )", False, None),
    ("gpio", "IO_EXPANDER_PIN_NUM_0", "(IO_EXPANDER_PIN_NUM_0)", False, None),
    ("int", 720, "(721)", False, "does not evaluate to the field's value '720'"),
    ("gpio", 4, "(GPIO_NUM_5)", False, "does not evaluate"),
    ("int", 720, "720", False, "same as the canonical spelling"),
    ("int", 720, "(720)", True, "same as the canonical spelling"),
    ("int", 720, "720", True, None),
    ("int", 720, "", False, "expected one line of C text"),
    ("int", 720, 720, False, "quote it"),
    ("int", 720, ["(720)"], False, "expected one line of C text"),
])
def test_verbatim_text_must_spell_the_value(kind: str, value: object, text: object, parens: bool,
                                            problem: str | None) -> None:
    found = values.spelling_problem(kind, value, text, parens)
    assert (found is None) if problem is None else (problem in (found or "")), found


HEADER = """\
#define AUDIO_INPUT_SAMPLE_RATE 16000
#ifdef BOOT_BUTTON_GPIO
#define EARLY 1
#endif
#define BOOT_BUTTON_GPIO GPIO_NUM_0
#define DISPLAY_WIDTH (240)
#define DISPLAY_SPI_SCLK_HZ (40 * 1000 * 1000)
#define TP_PIN_NUM_SDA   (GPIO_NUM_6)
#define TP_PIN_NUM_SCL (GPIO_NUM_7)
#define DISPLAY_WIDTH_ALIAS_UNKNOWN 1
#define DISPLAY_DC GPIO_NUM_3
#define LCD_DC_PIN GPIO_NUM_4
#undef DISPLAY_HEIGHT
#define DISPLAY_HEIGHT 10
#if CONFIG_X
#define DISPLAY_HEIGHT 20
#else
#define DISPLAY_HEIGHT 30
#endif
"""


def test_structure_keeps_every_define_in_place() -> None:
    parsed = parse_config_h(HEADER, "x.h")
    hardware, items = structure_header(parsed.items)
    assert hardware["audio"] == {"input_sample_rate": 16000}
    # Nothing moves, so BOOT_BUTTON_GPIO (tested by an #ifdef above it) can be a field: its slot stays below.
    assert hardware["buttons"] == {"boot": 0}
    slots = [i.fields for i in items if isinstance(i, HardwareSlot) and i.fields]
    assert slots == [("audio.input_sample_rate",), ("buttons.boot", "display.width", "display.spi_clock_hz",
                                                   "touch.i2c_sda", "touch.i2c_scl"), ("display.dc",),
                     ("display.height",)]
    assert [type(i).__name__ for i in items[:3]] == ["HardwareSlot", "Conditional", "HardwareSlot"]
    assert hardware["display"] == {"width": 240, "height": 10, "spi_clock_hz": 40000000, "dc": 3,
                                   "macros": {"dc": "DISPLAY_DC"},
                                   "verbatim": {"width": "(240)", "spi_clock_hz": "(40 * 1000 * 1000)"}}
    # Every value of the part parenthesised: one flag instead of an override per field.
    assert hardware["touch"] == {"i2c_sda": 6, "i2c_scl": 7, "parens": True}
    assert isinstance(items[0], HardwareSlot)
    raw_names = [i.name for i in items if isinstance(i, Define)]
    # A second spelling of a field already set stays raw; DISPLAY_HEIGHT after its #undef is a field in place.
    assert raw_names == ["DISPLAY_WIDTH_ALIAS_UNKNOWN", "LCD_DC_PIN"]
    branch = next(i for i in items if isinstance(i, Conditional) and i.branches[0][0] == "if CONFIG_X")
    assert isinstance(branch.branches[0][1][0], HardwareSlot)
    assert any(isinstance(i, Raw) and "#undef" in i.line for i in items)


@pytest.mark.parametrize(("condition", "env", "expected"), [
    ("ifdef X", {"X": "1"}, True),
    ("ifndef X", {"X": "1"}, False),
    ("if CONFIG_A || CONFIG_B", {"CONFIG_B": "1"}, True),
    ("if defined(CONFIG_A) && !defined CONFIG_B", {"CONFIG_A": "1"}, True),
    ("elif CONFIG_A == 2", {"CONFIG_A": "2"}, True),
    ("if CONFIG_A // comment", {}, False),
])
def test_condition_evaluation(condition: str, env: dict[str, str], expected: bool) -> None:
    assert eval_condition(condition, env) is expected


def test_defined_macros_follows_branches_and_undef() -> None:
    parsed = parse_config_h(HEADER, "x.h")
    assert defined_macros(parsed.items, {"CONFIG_X": "y"})["DISPLAY_HEIGHT"] == "20"
    assert defined_macros(parsed.items, {"CONFIG_X": "n"})["DISPLAY_HEIGHT"] == "30"
    assert "EARLY" not in defined_macros(parsed.items, {})


def test_missing_marker_places_hardware_after_includes() -> None:
    from xzbuild.model.types import Board
    from xzbuild.parts import emit_config_h
    from xzbuild.parts.items import Include

    board = Board(dir="x", path=__import__("pathlib").Path("x.yaml"), type="x", target="esp32s3",
                  hardware={"buttons": {"boot": 0}},
                  config_h=[Include("<driver/gpio.h>"), Define("EXTRA", "1")])
    assert render_items(emit_config_h(board)) == ["#include <driver/gpio.h>", "#define BOOT_BUTTON_GPIO GPIO_NUM_0",
                                                  "#define EXTRA 1"]
