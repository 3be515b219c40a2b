"""Unit tests: natural label order, config.json formatting and layouts, table splicing, gcc -E equivalence."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.codegen import readback
from xzbuild.codegen.cpp_equiv import compare_headers
from xzbuild.codegen.global_tables import BoardTypeRow, rewrite_dependency_list, splice_cmake, splice_kconfig
from xzbuild.codegen.jsonfmt import JsonLayout, derive_layout, format_config_json
from xzbuild.codegen.natural import natural_label_key, sort_labels_naturally
from xzbuild.core.errors import UserError

from .conftest import CMAKE, KCONFIG


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["Board 2", "Board 1.8", "Board 1.54"], ["Board 1.54", "Board 1.8", "Board 2"]),
        (["board 10", "Board 9"], ["Board 9", "board 10"]),
        (["Kit (套件) 2", "Kit 1 (套件)"], ["Kit 1 (套件)", "Kit (套件) 2"]),  # only a trailing CJK group drops
        (["Zeta", "alpha"], ["alpha", "Zeta"]),
    ],
)
def test_natural_order(labels: list[str], expected: list[str]) -> None:
    assert sort_labels_naturally(labels) == expected


def test_natural_key_drops_trailing_cjk_parenthetical() -> None:
    assert natural_label_key("Bread Compact Wi-Fi (面包板)") == natural_label_key("bread compact wi-fi")
    assert natural_label_key("LCD 1.75") == ((0, "lcd "), (1, Decimal("1.75")), (0, ""))


def test_canonical_json_format() -> None:
    value = {"manufacturer": "m", "type": "t", "target": "esp32s3",
             "builds": [{"name": "n", "legacy_names": ["a", "b"], "sdkconfig_append": []},
                        {"name": "x", "build_options": {"camera_vflip": True}, "sdkconfig_append": ["CONFIG_A=y"]}]}
    text = format_config_json(value)
    expected = json.dumps(value, indent=4, ensure_ascii=False).replace('[\n                "a",\n                "b"\n            ]', '["a", "b"]')
    assert text == expected + "\n"


QUIRKS = [
    '{\n    "type": "t",\n  "target": "esp32s3",\n  "builds": [\n    {\n      "name": "n",\n      "sdkconfig_append": ["CONFIG_A=y"]\n    }\n  ]\n}\n',
    '{\n    "type": "t",\n    "target": "esp32",\n    "builds": [{\n        "name": "n",\n        "sdkconfig_append": [\n\t\t\t\t"CONFIG_A=y",  \n            "CONFIG_B=n"\n        ]\n    }]\n} ',
    '{\n    "type": "t",\n    "target": "esp32",\n    "builds": [\n        {\n            "name": "n",\n            "sdkconfig_append": [\n            ]\n        }\n    ]\n}',
    '{"type":"ü","target":"esp32","builds":[]}',
]


@pytest.mark.parametrize("text", QUIRKS)
def test_layout_reproduces_hand_formatting(text: str) -> None:
    value = json.loads(text)
    layout = derive_layout(text, value)
    assert layout is not None
    assert format_config_json(value, JsonLayout.from_data(layout.to_data())) == text


def test_layout_refuses_token_changes() -> None:
    assert derive_layout('{"type": "t", "target": "x"}', {"target": "x", "type": "t"}) is None
    assert derive_layout('{"type": "\\u00fc"}', {"type": "ü"}) is None  # escaped spelling is not whitespace


def test_stale_layout_is_ignored() -> None:
    layout = JsonLayout(gaps={999: "\t"}, tail="")
    assert format_config_json({"a": 1}, layout) == '{\n    "a": 1\n}'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=60, deadline=None)
@given(json_values)
def test_format_parses_back(value: object) -> None:
    text = format_config_json(value)
    assert json.loads(text) == value
    assert derive_layout(text, value) == JsonLayout()


def _rows() -> list[BoardTypeRow]:
    return [
        BoardTypeRow("BOARD_TYPE_B", "Board 10", "esp32s3", "b", text_font="font_noto_sans_basic_16_4",
                     extra_cmake={"EXTRA_DIR": '"${CMAKE_BINARY_DIR}/x"'}, target_default=True, device_aec=True),
        BoardTypeRow("BOARD_TYPE_A", "Board 9", "esp32c3", "m/a", emote_resolution="360_360", target_default=True,
                     display_models=(("oled", "A_SUBCHOICE_OLED"),)),
    ]


def test_splice_kconfig_is_idempotent_and_adds_no_markers() -> None:
    once = splice_kconfig(KCONFIG, _rows())
    assert splice_kconfig(once, _rows()) == once
    assert "xzbuild" not in once  # the tree's own layout: no markers added (issue 37: no churn)
    assert readback.kconfig_entries(once) == [
        ("BOARD_TYPE_A", "Board 9", "IDF_TARGET_ESP32C3"),
        ("BOARD_TYPE_B", "Board 10", "IDF_TARGET_ESP32S3"),
    ]
    assert readback.kconfig_defaults(once) == {"IDF_TARGET_ESP32C3": "BOARD_TYPE_A", "IDF_TARGET_ESP32S3": "BOARD_TYPE_B"}
    assert readback.dependency_terms(once, "choice", "DISPLAY_OLED_TYPE") == {"(BOARD_TYPE_A && A_SUBCHOICE_OLED)"}
    assert readback.dependency_terms(once, "config", "USE_DEVICE_AEC") == {"BOARD_TYPE_B"}
    assert "config BOARD_TYPE_PLACEHOLDER" not in once and "default BOARD_TYPE_PLACEHOLDER" not in once
    # A list naming only the removed symbol means n already: it is left as written (no churn).
    assert readback.dependency_terms(once, "choice", "DISPLAY_STYLE") <= {"BOARD_TYPE_PLACEHOLDER"}


def test_splice_cmake() -> None:
    once = splice_cmake(CMAKE, _rows())
    assert splice_cmake(once, _rows()) == once
    assert readback.cmake_table(once) == {
        "BOARD_TYPE_A": {"BOARD_DIR": '"m/a"', "EMOTE_RESOLUTION": '"360_360"'},
        "BOARD_TYPE_B": {"BOARD_DIR": '"b"', "BUILTIN_TEXT_FONT": "font_noto_sans_basic_16_4",
                         "EXTRA_DIR": '"${CMAKE_BINARY_DIR}/x"'},
    }
    assert once.index("if(CONFIG_BOARD_TYPE_A)") < once.index("elseif(CONFIG_BOARD_TYPE_B)")


def test_empty_dependency_list_hides_the_option() -> None:
    text = rewrite_dependency_list(KCONFIG, "config", "USE_DEVICE_AEC", [])
    assert "depends on USE_AUDIO_PROCESSOR && (n)\n" in text  # a one-line list stays on one line


@pytest.mark.parametrize(("before", "terms", "after"), [
    # Listed boards keep their place, a new one is appended, a gone one leaves; the line style stays.
    ("    depends on BOARD_TYPE_Z || BOARD_TYPE_A\n", ["BOARD_TYPE_A", "BOARD_TYPE_M", "BOARD_TYPE_Z"],
     "    depends on BOARD_TYPE_Z || BOARD_TYPE_A || BOARD_TYPE_M\n"),
    ("    depends on BOARD_TYPE_Z \\\n        || BOARD_TYPE_A\n", ["BOARD_TYPE_A"], "    depends on BOARD_TYPE_A\n"),
    ("    depends on BOARD_TYPE_Z \\\n        || BOARD_TYPE_A\n", ["BOARD_TYPE_A", "BOARD_TYPE_B", "BOARD_TYPE_Z"],
     "    depends on BOARD_TYPE_Z \\\n        || BOARD_TYPE_A \\\n        || BOARD_TYPE_B\n"),
    ("    depends on BOARD_TYPE_Z || BOARD_TYPE_A\n", ["BOARD_TYPE_A", "BOARD_TYPE_Z"],
     "    depends on BOARD_TYPE_Z || BOARD_TYPE_A\n"),
])
def test_dependency_list_edits_keep_order_and_layout(before: str, terms: list[str], after: str) -> None:
    text = f"config USE_DEVICE_AEC\n    bool \"AEC\"\n{before}\n"
    assert rewrite_dependency_list(text, "config", "USE_DEVICE_AEC", terms) == (
        f"config USE_DEVICE_AEC\n    bool \"AEC\"\n{after}\n")


def test_unbalanced_markers_are_a_user_error() -> None:
    once = splice_cmake(CMAKE, _rows())
    assert "xzbuild" not in once  # an unmarked tree stays unmarked
    start = once.index("if(CONFIG_BOARD_TYPE_A)")
    broken = once[:start] + "# BEGIN xzbuild board-table: generated\n" + once[start:]
    with pytest.raises(UserError, match="END marker") as err:
        splice_cmake(broken, _rows(), "main/CMakeLists.txt")
    assert str(err.value).startswith("main/CMakeLists.txt:4: ")


needs_gcc = pytest.mark.usefixtures("gcc")  # fails under CI=true when gcc is missing, skips elsewhere


@needs_gcc
def test_header_equivalence(tmp_path: Path) -> None:
    ref = tmp_path / "ref.h"
    ref.write_text("#include <driver/gpio.h>\n#define W   240 // width\n#if CONFIG_BIG\n#define H 320\n#else\n#define H 240\n#endif\n")
    same = tmp_path / "same.h"
    same.write_text("// banner\n#include <driver/gpio.h>\n#define W 240\n#ifdef CONFIG_BIG\n#define H 320\n#else\n#define H 240\n#endif\n#define EXTRA 1\n")
    other = tmp_path / "other.h"
    other.write_text("#define W 241\n")
    assert compare_headers(ref, same, {"CONFIG_BIG": "1"}, tmp_path / "w").ok
    assert compare_headers(ref, same, {}, tmp_path / "w").ok
    result = compare_headers(ref, other, {}, tmp_path / "w")
    assert not result.ok
    assert result.missing == ["H"] and result.different == [("W", "240", "241")]


@needs_gcc
def test_header_errors_must_match(tmp_path: Path) -> None:
    ref = tmp_path / "ref.h"
    ref.write_text('#ifndef CONFIG_X\n#error "pick X"\n#endif\n')
    cand = tmp_path / "cand.h"
    cand.write_text("\n")
    assert not compare_headers(ref, cand, {}, tmp_path / "w").ok
    assert compare_headers(ref, cand, {"CONFIG_X": "1"}, tmp_path / "w").ok


@needs_gcc
def test_respelled_values_are_equivalent_but_not_strict(tmp_path: Path) -> None:
    ref = tmp_path / "ref.h"
    ref.write_text("#define HZ (40 * 1000 * 1000)\n#define OFF 0x14\n#define PIN (GPIO_NUM_4)\n")
    cand = tmp_path / "cand.h"
    cand.write_text("#define HZ 40000000\n#define OFF 20\n#define PIN GPIO_NUM_4\n")
    result = compare_headers(ref, cand, {}, tmp_path / "w")
    assert result.ok and not result.strict
    assert [name for name, _, _ in result.respelled] == ["HZ", "OFF", "PIN"]
    wrong = tmp_path / "wrong.h"
    wrong.write_text("#define HZ 40000001\n#define OFF 20\n#define PIN GPIO_NUM_5\n")
    assert [n for n, _, _ in compare_headers(ref, wrong, {}, tmp_path / "w").different] == ["HZ", "PIN"]


def test_component_hooks_follow_board_fields() -> None:
    from xzbuild.codegen.hooks import Hook, build_hooks, read_hooks, render_hooks

    facts = [
        {"condition": 'BOARD_TYPE STREQUAL "kit"', "components": ["pmic"], "symbols": [], "types": ["kit"]},
        {"condition": "CONFIG_BOARD_TYPE_A OR CONFIG_BOARD_TYPE_B", "components": ["imu"], "symbols": ["x"]},
        {"condition": "CONFIG_BOARD_TYPE_B AND IDF_VERSION_MAJOR LESS 6", "components": ["touch"], "symbols": ["x"]},
        {"condition": "CONFIG_BOARD_TYPE_GONE", "components": ["sd"], "symbols": ["x"]},
    ]
    entries = [("BOARD_TYPE_B", ["imu", "touch"], "b"), ("BOARD_TYPE_C", ["imu", "touch", "camera"], "c"),
               ("BOARD_TYPE_KIT", ["pmic"], "kit")]
    hooks = build_hooks(facts, entries)
    assert hooks == [
        Hook('BOARD_TYPE STREQUAL "kit"', ("pmic",)),
        Hook("CONFIG_BOARD_TYPE_B OR CONFIG_BOARD_TYPE_C", ("imu",)),
        Hook("(CONFIG_BOARD_TYPE_B OR CONFIG_BOARD_TYPE_C) AND IDF_VERSION_MAJOR LESS 6", ("touch",)),
        Hook("CONFIG_BOARD_TYPE_C", ("camera",)),
    ]
    assert read_hooks(render_hooks(hooks)) == hooks
    # The type-keyed block goes once no board of that type needs its component.
    assert build_hooks(facts[:1], [("BOARD_TYPE_KIT", ["pmic"], "renamed")])[0] == Hook("CONFIG_BOARD_TYPE_KIT", ("pmic",))


# Issue 37: a tree before upstream's 2026-07-27 reorganisation (shapes copied from upstream HEAD~40, 2026-07-15).
OLD_KCONFIG = '''choice BOARD_TYPE
    prompt "Board Type"
    default BOARD_TYPE_B
    help
        Board type.

    config BOARD_TYPE_B
        bool "Old B (面包板)"
        depends on IDF_TARGET_ESP32S3
endchoice
'''
OLD_CMAKE = '''if(CONFIG_BOARD_TYPE_B)
    set(BOARD_TYPE "b")
    set(BUILTIN_TEXT_FONT font_puhui_basic_16_4)
    # a comment upstream keeps
elseif(CONFIG_BOARD_TYPE_R)
    set(MANUFACTURER "rymcu")
    set(BOARD_TYPE "r")
endif()
file(GLOB BOARD_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/boards/${MANUFACTURER}/${BOARD_TYPE}/*.cc)
if(NOT BOARD_NAME)
    set(BOARD_NAME ${BOARD_TYPE})
endif()
'''


def _old_rows() -> list[BoardTypeRow]:
    return [BoardTypeRow("BOARD_TYPE_B", "Old B (面包板)", "esp32s3", "b", text_font="font_noto_sans_basic_16_4",
                         target_default=True, extra_cmake={"BOARD_NAME": '"b-name"'}),
            BoardTypeRow("BOARD_TYPE_R", "R", "esp32s3", "rymcu/r")]


def test_tree_without_per_target_defaults_is_merged_in_place() -> None:
    """Before: 'cannot find the BOARD_TYPE default lines; is this a xiaozhi-esp32 checkout?'."""
    rows = _old_rows()
    assert splice_kconfig(OLD_KCONFIG, rows[:1]) == OLD_KCONFIG
    new = BoardTypeRow("BOARD_TYPE_C", "Z Board", "esp32c3", "c")
    out = splice_kconfig(OLD_KCONFIG, [rows[0], new])
    assert out == OLD_KCONFIG.replace("endchoice", '    config BOARD_TYPE_C\n        bool "Z Board"\n'
                                      "        depends on IDF_TARGET_ESP32C3\nendchoice")


def test_board_type_chain_keeps_its_conventions_and_fallback() -> None:
    """Before: the BOARD_NAME fallback was refused ('remove it'), a new branch got set(BOARD_DIR ...) in a tree that
    globs boards/${BOARD_TYPE}, fonts got today's names and the comment inside the chain was dropped."""
    cmake = OLD_CMAKE.replace('    set(BOARD_TYPE "b")\n', '    set(BOARD_TYPE "b")\n    set(BOARD_NAME "b-name")\n')
    assert splice_cmake(cmake, _old_rows()) == cmake  # same meaning: every byte kept
    new = BoardTypeRow("BOARD_TYPE_N", "Zeta N", "esp32s3", "acme/n", text_font="font_noto_sans_basic_20_4",
                       emoji_collection="twemoji_64")
    out = splice_cmake(cmake, [*_old_rows(), new])
    assert out == cmake.replace("endif()\nfile", 'elseif(CONFIG_BOARD_TYPE_N)\n    set(MANUFACTURER "acme")\n'
                                '    set(BOARD_TYPE "n")\n    set(BUILTIN_TEXT_FONT font_puhui_basic_20_4)\n'
                                "    set(DEFAULT_EMOJI_COLLECTION twemoji_64)\nendif()\nfile", 1)


def test_chain_override_after_the_chain_is_still_refused() -> None:
    cmake = OLD_CMAKE + 'set(BOARD_NAME "x")\n'
    with pytest.raises(UserError, match="sets a variable the board table sets") as err:
        splice_cmake(cmake.replace('    set(BOARD_TYPE "b")\n', '    set(BOARD_TYPE "b")\n    set(BOARD_NAME "b-name")\n'),
                     _old_rows())
    assert str(err.value).startswith("main/CMakeLists.txt:14: ")


def test_flat_board_type_tree_names_what_it_cannot_hold() -> None:
    flat = OLD_CMAKE.replace('    set(MANUFACTURER "rymcu")\n', "").replace("${MANUFACTURER}/", "")
    rows = [_old_rows()[0], BoardTypeRow("BOARD_TYPE_R", "R", "esp32s3", "r"),
            BoardTypeRow("BOARD_TYPE_N", "N", "esp32s3", "acme/n")]
    with pytest.raises(UserError, match=r"manufacturer directory.*boards/\$\{BOARD_TYPE\}") as err:
        splice_cmake(flat, rows)
    assert str(err.value).startswith("main/CMakeLists.txt:8: ")


def test_fork_that_removed_boards_keeps_its_lists_and_hooks() -> None:
    """A fork (mydazy/xiaozhi-esp32, 2026-06) deleted upstream's boards but kept their names in the dependency lists
    and a hook keyed on one: symbols no Kconfig defines read as n, so the text means the same and stays (before: the
    lists became `depends on n` and the hook and its comments were dropped)."""
    from xzbuild.codegen.hooks import Hook, splice_hooks

    text = "config USE_DEVICE_AEC\n    bool \"AEC\"\n    depends on BOARD_TYPE_GONE || BOARD_TYPE_B\n"
    assert rewrite_dependency_list(text, "config", "USE_DEVICE_AEC", ["BOARD_TYPE_B"], known={"BOARD_TYPE_B"}) == text
    cmake = ('set(MAIN_PRIV_REQUIRES_EXTRA "")\nif(CONFIG_BOARD_TYPE_GONE)\n    list(APPEND MAIN_PRIV_REQUIRES_EXTRA\n'
             "        x\n    )\nendif()\nif(CONFIG_BOARD_TYPE_B)\n    # a comment the fork keeps\n"
             "    list(APPEND MAIN_PRIV_REQUIRES_EXTRA\n        y\n    )\nendif()\n\nidf_component_register(SRCS a)\n")
    assert splice_hooks(cmake, [Hook("CONFIG_BOARD_TYPE_B", ("y",))], known={"BOARD_TYPE_B"}) == cmake
    changed = splice_hooks(cmake, [Hook("CONFIG_BOARD_TYPE_B", ("z",))], known={"BOARD_TYPE_B"})
    assert "        z\n" in changed and "BOARD_TYPE_GONE" not in changed


# --- Issue 37: chains as upstream had them -----------------------------------------------------------------

_OR_CHAIN = """if(CONFIG_BOARD_TYPE_A)
    set(MANUFACTURER "m")
    set(BOARD_TYPE "a")
    set(BUILTIN_TEXT_FONT font_puhui_basic_16_4)
elseif(CONFIG_BOARD_TYPE_NANO OR CONFIG_ETH_BOARD_TYPE_NANO)
    set(MANUFACTURER "m")
    set(BOARD_TYPE "nano")
    set(BUILTIN_TEXT_FONT font_puhui_basic_30_4)
elseif(CONFIG_BOARD_TYPE_HALF)
    set(MANUFACTURER "m")
    set(BOARD_TYPE "half")
endif()
"""


def _row(symbol: str, board_dir: str, font: str | None) -> BoardTypeRow:
    return BoardTypeRow(symbol=symbol, label=symbol, target="esp32s3", dir=board_dir, text_font=font)


def test_two_choice_branch_is_the_boards_and_keeps_its_head() -> None:
    """Upstream 2026-06 (HEAD~41..46): ``elseif(CONFIG_BOARD_TYPE_X OR CONFIG_ETH_BOARD_TYPE_X)`` selects board X
    (the other symbol is the Ethernet board choice's). Unchanged, it is kept byte for byte; a changed font rewrites
    the branch's set()s under the tree's own head line. Two board symbols stay refused. Before: refused at its line."""
    from xzbuild.importer.cmake import branch_symbol, parse_cmake

    assert branch_symbol("CONFIG_BOARD_TYPE_NANO OR CONFIG_ETH_BOARD_TYPE_NANO") == "BOARD_TYPE_NANO"
    assert branch_symbol("CONFIG_BOARD_TYPE_A OR CONFIG_BOARD_TYPE_B") is None
    assert branch_symbol("CONFIG_BOARD_TYPE_A AND CONFIG_X") is None
    assert [b.symbol for b in parse_cmake(_OR_CHAIN).branches] == ["BOARD_TYPE_A", "BOARD_TYPE_NANO", "BOARD_TYPE_HALF"]
    rows = [_row("BOARD_TYPE_A", "m/a", "font_noto_sans_basic_16_4"),
            _row("BOARD_TYPE_NANO", "m/nano", "font_noto_sans_basic_30_4"), _row("BOARD_TYPE_HALF", "m/half", None)]
    assert splice_cmake(_OR_CHAIN, rows) == _OR_CHAIN
    rows[1] = _row("BOARD_TYPE_NANO", "m/nano", "font_noto_sans_basic_20_4")
    changed = splice_cmake(_OR_CHAIN, rows)
    assert "elseif(CONFIG_BOARD_TYPE_NANO OR CONFIG_ETH_BOARD_TYPE_NANO)\n" in changed
    assert "set(BUILTIN_TEXT_FONT font_puhui_basic_20_4)" in changed  # the tree's spelling of the new size
    with pytest.raises(UserError, match=r":5: board chain branch"):
        splice_cmake(_OR_CHAIN.replace("CONFIG_ETH_BOARD_TYPE_NANO", "CONFIG_BOARD_TYPE_A"), rows)


def test_skipped_boards_keep_their_branch_and_dependency_terms() -> None:
    """A board the import skipped (upstream's own broken files; ``_firmware.yaml`` ``unimported``) has no row: its
    chain branch stays where it is, and its term in a dependency list stays. Before: both were removed."""
    rows = [_row("BOARD_TYPE_A", "m/a", "font_noto_sans_basic_16_4"),
            _row("BOARD_TYPE_NANO", "m/nano", "font_noto_sans_basic_30_4")]
    assert splice_cmake(_OR_CHAIN, rows, keep=frozenset({"BOARD_TYPE_HALF"})) == _OR_CHAIN
    assert "CONFIG_BOARD_TYPE_HALF" not in splice_cmake(_OR_CHAIN, rows)  # a removed board still goes
    text = "config USE_X\n    bool \"x\"\n    depends on Y && (BOARD_TYPE_A || BOARD_TYPE_HALF)\n"
    assert rewrite_dependency_list(text, "config", "USE_X", ["BOARD_TYPE_A"], keep=frozenset({"BOARD_TYPE_HALF"})) \
        == text
    assert "BOARD_TYPE_HALF" not in rewrite_dependency_list(text, "config", "USE_X", ["BOARD_TYPE_A"])
