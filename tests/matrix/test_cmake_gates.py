"""Sources main/CMakeLists.txt compiles only for some targets or with an option on narrow a selection."""

from __future__ import annotations

import pytest

from tests.matrix.conftest import FileTexts, make_entry
from xzbuild.matrix.cmake_gates import Gate, off_by_default, source_gate, union
from xzbuild.matrix.graph import BoardGraph, load_path_map
from xzbuild.matrix.select import select_variants
from xzbuild.sdkconfig.resolve import release_config

UNIVERSE = frozenset({"esp32", "esp32c3", "esp32s3", "esp32p4"})

CMAKE = """\
set(SOURCES "application.cc"
            "display/lcd_display.cc")
list(APPEND SOURCES "boards/common/board.cc")
if(CONFIG_IDF_TARGET_ESP32S3 OR CONFIG_IDF_TARGET_ESP32P4)
    list(APPEND SOURCES "audio/afe_engine.cc")
else()
    list(APPEND SOURCES "audio/lite_engine.cc")
endif()
if (CONFIG_USE_BLUFI)
    list(APPEND SOURCES "net/blufi.cpp")
endif ()
if(CONFIG_USE_HOTSPOT)
    list(APPEND SOURCES "boards/common/hotspot.cc")
endif()
if(CONFIG_USE_CHOSEN)
    list(APPEND SOURCES "chosen.cc")
endif()
if(BOARD_TYPE STREQUAL "x")
    list(APPEND SOURCES "odd.cc")
endif()
if(CONFIG_IDF_TARGET_ESP32)
    list(REMOVE_ITEM SOURCES "display/lcd_display.cc")
endif()
set(EXTRA "extra.cc")
file(GLOB COMMON ${CMAKE_CURRENT_SOURCE_DIR}/boards/common/*.cc)
idf_component_register(SRCS ${SOURCES} ${EXTRA})
"""

KCONFIG = """\
config USE_BLUFI
    bool "BluFi"
    select BT_ENABLED
config USE_HOTSPOT
    bool "Hotspot"
    default y
choice PICK
    prompt "pick"
    config USE_CHOSEN
        bool "chosen"
endchoice
"""


@pytest.mark.parametrize(("rel", "expected"), [
    ("audio/afe_engine.cc", Gate(frozenset({"esp32s3", "esp32p4"}))),
    ("audio/lite_engine.cc", Gate(frozenset({"esp32", "esp32c3"}))),      # else() after target conditions
    ("net/blufi.cpp", Gate(UNIVERSE, frozenset({"USE_BLUFI"}))),  # off unless a variant sets it
    ("gone.cc", Gate(frozenset())),                                      # not compiled at all
    ("application.cc", Gate(UNIVERSE)),                                  # unconditional
    ("display/lcd_display.cc", Gate(UNIVERSE)),                          # REMOVE_ITEM is ignored (superset)
    ("boards/common/hotspot.cc", None),                                  # default y: not decidable here
    ("chosen.cc", None),                                                 # a choice member may be the default
    ("odd.cc", None),                                                    # a condition on something else
    ("extra.cc", None),                                                  # listed some other way
    ("boards/common/sy6970.cc", None),                                   # may come from the glob
])
def test_source_gate(rel: str, expected: Gate | None) -> None:
    assert source_gate(rel, CMAKE, KCONFIG, UNIVERSE) == expected


@pytest.mark.parametrize("cmake", [
    # a '#' and parentheses inside a quoted string neither end the line nor open a statement
    'message(STATUS "see (#12")\nif(CONFIG_IDF_TARGET_ESP32S3)\n    list(APPEND SOURCES "a.cc")\nendif()\n',
    'if(CONFIG_IDF_TARGET_ESP32S3) # only S3 (for now\n    list(APPEND SOURCES "a.cc")\nendif()\n',
])
def test_quoted_text_and_comments_do_not_confuse_the_nesting(cmake: str) -> None:
    assert source_gate("a.cc", cmake, "", UNIVERSE) == Gate(frozenset({"esp32s3"}))


@pytest.mark.parametrize("cmake", [
    'if(CONFIG_IDF_TARGET_ESP32S3)\n    list(APPEND SOURCES "a.cc")\n',            # no endif
    'endif()\nlist(APPEND SOURCES "a.cc")\n',                                    # endif without if
    'else()\nlist(APPEND SOURCES "a.cc")\n',
])
def test_unbalanced_conditions_are_not_guessed(cmake: str) -> None:
    assert source_gate("a.cc", cmake, "", UNIVERSE) is None


def test_off_by_default_needs_a_plain_bool_nobody_selects() -> None:
    assert off_by_default("USE_BLUFI", KCONFIG)
    assert not off_by_default("USE_HOTSPOT", KCONFIG)
    assert not off_by_default("USE_CHOSEN", KCONFIG)
    assert not off_by_default("BT_ENABLED", KCONFIG)  # not defined here
    assert not off_by_default("USE_BLUFI", KCONFIG + "config OTHER\n    bool \"o\"\n    select USE_BLUFI\n")


def test_union_keeps_everything_either_side_compiles() -> None:
    a, b = Gate(frozenset({"esp32s3"})), Gate(frozenset({"esp32p4"}))
    assert union([a, b]) == Gate(frozenset({"esp32s3", "esp32p4"}))
    assert union([a, None]) is None
    assert union([a, Gate(frozenset({"esp32"}), frozenset({"X"}))]) is None


def test_selection_uses_the_gates_of_base_and_head() -> None:
    entries = [make_entry("s3", "s3", "esp32s3"), make_entry("p4", "p4", "esp32p4"), make_entry("c3", "c3", "esp32c3")]
    graph = BoardGraph({}, load_path_map())
    files = {"main/CMakeLists.txt": CMAKE, "main/Kconfig.projbuild": KCONFIG}
    content = FileTexts(files, files)
    sel = select_variants(entries, ["main/audio/afe_engine.cc"], graph, content)
    assert [e.full_name for e in sel.entries] == ["s3", "p4"] and sel.everything is None
    assert "compiles it only for targets esp32p4, esp32s3" in sel.why["s3"][0]
    # synthetic entries have no model variant: an option gate keeps them (nothing known to rule them out)
    assert len(select_variants(entries, ["main/net/blufi.cpp"], graph, content).entries) == 3
    # a source moved out of the target block at head: every variant
    moved = {**files, "main/CMakeLists.txt": CMAKE.replace('list(APPEND SOURCES "audio/afe_engine.cc")', "")
             .replace('"application.cc"', '"application.cc" "audio/afe_engine.cc"')}
    assert select_variants(entries, ["main/audio/afe_engine.cc"], graph, FileTexts(files, moved)).everything
    # without base/head content the old rule stands: an unknown shared source rebuilds everything
    assert select_variants(entries, ["main/audio/afe_engine.cc"], graph, None).everything


def test_option_gate_follows_the_variant_sdkconfig(board_set) -> None:  # type: ignore[no-untyped-def]
    from xzbuild.matrix.entries import list_variants

    entries = [e for e in list_variants(board_set, "6.0.2") if e.enabled]
    # No release variant provisions Wi-Fi through BluFi: a BluFi-only source is compiled by none of them.
    blufi = Gate(frozenset({e.target for e in entries}), frozenset({"USE_ESP_BLUFI_WIFI_PROVISIONING"}))
    assert [e for e in entries if blufi.admits(e)] == []
    aec = Gate(frozenset({e.target for e in entries}), frozenset({"USE_DEVICE_AEC"}))
    chosen = [e for e in entries if aec.admits(e)]
    assert 0 < len(chosen) < len(entries)
    for e in entries:
        config = release_config(e)
        assert config is not None and (e in chosen) == (config.get("CONFIG_USE_DEVICE_AEC") == "y")


def test_new_off_option_selects_only_variants_that_set_it(board_set) -> None:  # type: ignore[no-untyped-def]
    from xzbuild.matrix.entries import list_variants

    entries = [e for e in list_variants(board_set, "6.0.2") if e.enabled]
    base = 'menu "X"\nconfig KEEP\n    bool "k"\nendmenu\n'
    added = base.replace("endmenu", 'config USE_ESP_BLUFI_WIFI_PROVISIONING\n    bool "BluFi"\n    default n\nendmenu')
    content = FileTexts({"main/Kconfig.projbuild": base}, {"main/Kconfig.projbuild": added})
    sel = select_variants(entries, ["main/Kconfig.projbuild"], BoardGraph({}, load_path_map()), content)
    assert sel.everything is None and sel.entries == []  # no release variant turns BluFi on
    device_aec = added.replace("USE_ESP_BLUFI_WIFI_PROVISIONING", "USE_DEVICE_AEC")
    sel = select_variants(entries, ["main/Kconfig.projbuild"], BoardGraph({}, load_path_map()),
                          FileTexts({"main/Kconfig.projbuild": base}, {"main/Kconfig.projbuild": device_aec}))
    assert sel.everything is None and 0 < len(sel.entries) < len(entries)
    for e in sel.entries:
        config = release_config(e)
        assert config is not None and config.get("CONFIG_USE_DEVICE_AEC") == "y"


def test_a_line_without_config_prefix_leaves_the_release_config_alone(board_set, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """ESP-IDF's loader ignores an sdkconfig line without ``CONFIG_`` (no assignment at all), so a variant whose
    append carries one (upstream ships some, kept as ``sdkconfig_unprefixed``) has the release configuration
    it has without it; the expansion of its build options used to refuse the line, leaving it unknown."""
    import dataclasses

    import esp_kconfiglib

    from xzbuild.matrix.entries import list_variants

    (tmp_path / "Kconfig").write_text('mainmenu "nothing"\n', encoding="utf-8")
    (tmp_path / "sdkconfig").write_text("LV_USE_DEMO=y\n", encoding="utf-8")
    kconf = esp_kconfiglib.Kconfig(str(tmp_path / "Kconfig"), warn=False)
    kconf.load_config(str(tmp_path / "sdkconfig"), replace=True)
    assert kconf.missing_syms == []  # not even an assignment to an unknown symbol

    entry = next(e for e in list_variants(board_set, "6.0.2") if e.enabled and e.variant and e.variant.build_options)
    assert entry.variant is not None
    variant = dataclasses.replace(entry.variant, sdkconfig_append=[*entry.variant.sdkconfig_append, "LV_USE_DEMO=y"])
    with_line = dataclasses.replace(entry, variant=variant)
    assert release_config(with_line) is not None
    assert release_config(with_line) == release_config(entry)
