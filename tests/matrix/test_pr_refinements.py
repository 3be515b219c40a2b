"""PR-mode refinements on small hand-written inputs: CMake listing-only changes, the board chain's
effective font values, the shared representative of several classes, and a removed firmware option.

The expected values follow from CMake's and Kconfig's rules applied by hand to the texts below; the gcc
oracle (test_pr_oracle.py) checks the same classes on upstream's history."""

from __future__ import annotations

from tests.matrix.conftest import make_entry
from xzbuild.matrix.cmake_sources import listing_change
from xzbuild.matrix.compile_classes import CompileClass, SourceTree, branch_values, classes_for_units
from xzbuild.matrix.pr_mode import config_change_classes, representatives

BASE = """\
set(SOURCES "a.cc"
            "b.cc")
set(INCLUDE_DIRS "." "display" "audio")
file(GLOB BOARD_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/boards/${BOARD_TYPE}/*.cc)
list(APPEND SOURCES ${BOARD_SOURCES})
if(CONFIG_IDF_TARGET_ESP32S3)
    list(APPEND SOURCES "s3_only.cc")
endif()
idf_component_register(SRCS ${SOURCES} INCLUDE_DIRS ${INCLUDE_DIRS} PRIV_REQUIRES esp_pm)
"""


def test_a_removed_source_is_the_only_change() -> None:
    change = listing_change(BASE, BASE.replace('\n            "b.cc")', ")"))
    assert change is not None and change.sources == {"b.cc"} and not change.include_dirs


def test_a_new_gated_source_and_a_changed_condition() -> None:
    added = BASE.replace("idf_component_register", 'if(CONFIG_USE_X)\n    list(APPEND SOURCES "x.cc")\nendif()\n'
                                                   "idf_component_register")
    assert listing_change(BASE, added).sources == {"x.cc"}  # type: ignore[union-attr]
    widened = BASE.replace("if(CONFIG_IDF_TARGET_ESP32S3)", "if(CONFIG_IDF_TARGET_ESP32S3 OR CONFIG_IDF_TARGET_ESP32P4)")
    assert listing_change(BASE, widened).sources == {"s3_only.cc"}  # type: ignore[union-attr]
    here = BASE.replace('"s3_only.cc"', '"${CMAKE_CURRENT_SOURCE_DIR}/s3_only.cc"')
    assert listing_change(BASE, here).sources == set()  # type: ignore[union-attr]  # the same file


def test_anything_else_keeps_the_sound_answer() -> None:
    assert listing_change(BASE, BASE.replace("esp_pm", "esp_pm esp_eth")) is None  # a new requirement
    assert listing_change(BASE, BASE.replace("/*.cc)", "/*.c)")) is None  # a glob
    moved = BASE.replace("list(APPEND SOURCES ${BOARD_SOURCES})", "if(CONFIG_Y)\nlist(APPEND SOURCES "
                                                                   "${BOARD_SOURCES})\nendif()")
    assert listing_change(BASE, moved) is None  # a listing through a variable, under a new condition
    assert listing_change(BASE, BASE + "add_compile_options(-Werror)\n") is None


def test_include_directories_by_membership_and_order() -> None:
    added = listing_change(BASE, BASE.replace('"display" "audio"', '"display" "display/jpg" "audio"'))
    assert added is not None and added.include_dirs == {"display/jpg"} and not added.sources
    swapped = listing_change(BASE, BASE.replace('"display" "audio"', '"audio" "display"'))
    assert swapped is not None and swapped.include_dirs == {".", "display", "audio"}  # shadowing may change


CHAIN = """\
set(BUILTIN_TEXT_FONT font_default)
set(BUILTIN_ICON_FONT icon_default)
if(CONFIG_BOARD_TYPE_ONE)
    set(BOARD_TYPE "one")
    set(BUILTIN_TEXT_FONT font_big)
elseif(CONFIG_BOARD_TYPE_TWO)
    set(BOARD_TYPE "two")
elseif(CONFIG_BOARD_TYPE_THREE)
    set(BOARD_TYPE "three")
    set(BUILTIN_TEXT_FONT font_default)
    set(BUILTIN_ICON_FONT icon_big)
endif()
string(REGEX MATCH "_([0-9]+)$" _m "${BUILTIN_TEXT_FONT}")
set(TEXT_FONT_SIZE "${CMAKE_MATCH_1}")
target_compile_definitions(${COMPONENT_LIB} PRIVATE BUILTIN_TEXT_FONT=${BUILTIN_TEXT_FONT}
                           BUILTIN_ICON_FONT=${BUILTIN_ICON_FONT} TEXT_FONT_SIZE=${TEXT_FONT_SIZE})
"""


def _members(unit_text: str) -> list[tuple[str, ...]]:
    tree = SourceTree({"main/u.cc": unit_text})
    entries = [make_entry("one"), make_entry("two"), make_entry("three")]
    classes = classes_for_units("main/u.cc", ["main/u.cc"], entries, tree, CHAIN, lambda e: {}, lambda u, e: True)
    return sorted(c.members for c in classes)


def test_a_branch_without_a_font_has_the_default_and_only_mentioned_fonts_split() -> None:
    values = branch_values(CHAIN)
    assert dict(values.values["CONFIG_BOARD_TYPE_TWO"]) == {"BUILTIN_TEXT_FONT": "font_default",
                                                           "BUILTIN_ICON_FONT": "icon_default"}
    # two and three compile the same text font; only one has another.
    assert _members("LV_FONT_DECLARE(BUILTIN_TEXT_FONT);\n") == [("one",), ("two", "three")]
    assert _members("LV_FONT_DECLARE(BUILTIN_ICON_FONT);\n") == [("one", "two"), ("three",)]
    # TEXT_FONT_SIZE is computed from the font by string(): keyed on every chain value.
    assert _members("int s = TEXT_FONT_SIZE;\n") == [("one",), ("three",), ("two",)]


def test_one_variant_in_several_classes_is_built_once() -> None:
    entries = [make_entry(n) for n in ("a", "b", "c", "d")]
    by_name = {e.full_name: e for e in entries}
    order = {e.full_name: i for i, e in enumerate(entries)}
    classes = [CompileClass("p", u, (u,), m) for u, m in (("u1", ("a", "b")), ("u2", ("b", "c")), ("u3", ("c", "d")))]
    chosen: set[str] = set()
    reps = representatives(classes, chosen, by_name, order, None)
    assert chosen == {"b", "c"}  # not a, b, c (the first member of each)
    assert [reps[k] for k in classes] == ["b", "b", "c"]
    chosen = {"d"}  # already selected for another reason: it stands for its class
    reps = representatives(classes, chosen, by_name, order, None)
    assert reps[classes[2]] == "d" and chosen == {"b", "d"}


def test_a_removed_firmware_option_is_classified_not_built_in_full() -> None:
    entries = [make_entry("one"), make_entry("two")]
    tree = SourceTree({"main/uses.cc": "#if CONFIG_OLD_FEATURE\n#endif\n", "main/other.cc": ""})
    old_kconfig = "config OLD_FEATURE\n    bool \"old\"\n"
    fixed, classes = config_change_classes("main/Kconfig.projbuild", entries, tree, "", ["", old_kconfig],
                                           lambda e: {}, lambda e: {"OLD_FEATURE": "y"}, lambda u, e: True)
    assert fixed == []  # a symbol the base Kconfig declares is the firmware's, not an ESP-IDF option
    assert {c.unit for c in classes} == {"main/uses.cc"}
