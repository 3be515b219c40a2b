"""Importer on a miniature upstream-style tree (tests/importer/minifw, written for these tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from xzbuild.cli.main import main
from xzbuild.importer import import_firmware
from xzbuild.importer.configh import parse_config_h
from xzbuild.model import load_boards
from xzbuild.parts import emit_config_h
from xzbuild.parts.items import Conditional, Define, Item
from xzbuild.parts.preprocess import defined_macros

MINI = Path(__file__).parent / "minifw"


@pytest.fixture()
def imported(tmp_path: Path) -> tuple[Path, object]:
    out = tmp_path / "boards"
    return out, import_firmware(MINI, out)


def test_report_places_or_reports_everything(imported: tuple[Path, object]) -> None:
    _, report = imported
    assert report.boards == 5 and report.variants == 5  # type: ignore[attr-defined]
    assert report.no_config_json == ["acme/no-json", "orphan-dir"]  # type: ignore[attr-defined]
    assert report.empty_builds == ["acme/empty"]  # type: ignore[attr-defined]
    assert report.orphan_dirs == ["orphan-dir"]  # type: ignore[attr-defined]
    assert report.unselected_symbols == ["BOARD_TYPE_ACME_EMPTY", "BOARD_TYPE_ACME_NO_JSON"]  # type: ignore[attr-defined]
    assert report.version_gated_symbols == ["BOARD_TYPE_ACME_P4_PANEL_B"]  # type: ignore[attr-defined]
    assert "common" not in " ".join(report.written)  # type: ignore[attr-defined]


def test_model_of_imported_tree(imported: tuple[Path, object]) -> None:
    out, _ = imported
    bs = load_boards(out)
    assert [b.dir for b in bs.boards] == ["acme/empty", "acme/no-json", "acme/p4-panel", "orphan-dir", "tiny-oled"]
    panel = bs.board("acme/p4-panel")
    assert [k.symbol for k in panel.kconfig] == ["BOARD_TYPE_ACME_P4_PANEL", "BOARD_TYPE_ACME_P4_PANEL_B"]
    main_k, b_k = panel.kconfig
    assert (main_k.text_font, main_k.icon_font, main_k.emoji_collection) == (
        "font_noto_sans_basic_30_4", "font_material_symbols_30_4", "noto-color-emoji_128")
    assert b_k.icon_font is None and b_k.emote_resolution == "360_360"
    assert b_k.extra_cmake == {"EXTRA_ASSETS": '"${CMAKE_BINARY_DIR}/extra"'}
    assert main_k.device_aec and b_k.device_aec and main_k.emote_style and not b_k.emote_style
    assert main_k.target_default and not b_k.target_default
    assert b_k.camera_mirror_dynamic and main_k.camera_enable_symbol == "CONFIG_CAMERA_USB"
    assert main_k.kconfig_extra == ["PANEL_VERSION"] and main_k.cmake_hooks == ["acme__panel_driver"]
    assert panel.source_facts.lcd_display and panel.source_facts.camera and not panel.source_facts.wifi_board
    names = [(v.name, v.chip_variant, v.kconfig.symbol if v.kconfig else None) for v in panel.variants]
    assert names == [("p4-panel-5", "p4", "BOARD_TYPE_ACME_P4_PANEL"), ("p4x-panel-5", "p4x", "BOARD_TYPE_ACME_P4_PANEL"),
                     ("p4-panel-7", None, "BOARD_TYPE_ACME_P4_PANEL_B")]
    p4, p4x, seven = panel.variants
    assert p4.sdkconfig_append == ["CONFIG_BOARD_TYPE_ACME_P4_PANEL=y", "CONFIG_ESP32P4_SELECTS_REV_LESS_V3=y",
                                   "CONFIG_ESP32P4_REV_MIN_100=y"]
    assert p4x.sdkconfig_append == ["CONFIG_BOARD_TYPE_ACME_P4_PANEL=y"] and p4x.legacy_names == ["p4-panel-5-p4x"]
    assert p4.full_name == "acme-p4-panel-5" and p4.flash_size == "32MB" and p4.psram
    assert not seven.supports_idf("6.0.2") and seven.supports_idf("6.1") and seven.build_options == {"aec_mode": "device"}
    oled = bs.board("tiny-oled")
    assert oled.kconfig[0].display_model_choice == "oled" and oled.source_facts.wifi_board
    assert oled.variants[1].legacy_names == ["tiny64"]
    assert oled.hardware["display"]["width"] == 128 and oled.hardware["display"]["notes"] == {
        "mirror_x": "flipped on this board"}
    assert panel.hardware["display"]["macros"] == {"dc": "LCD_DC_PIN"}
    # Typed values for validation, the board's own text for the header.
    assert panel.hardware["display"]["spi_clock_hz"] == 40000000 and panel.hardware["display"]["offset_y"] == 20
    assert panel.hardware["display"]["verbatim"] == {"offset_y": "0x14", "spi_clock_hz": "(40 * 1000 * 1000)"}
    assert not bs.board("acme/no-json").has_config_json and bs.board("acme/no-json").config_h_guard is None
    assert bs.firmware.project_ver == "0.1.0" and bs.firmware.locales == [("LANGUAGE_EN_US", "en-US"),
                                                                          ("LANGUAGE_DE_DE", "de-DE")]
    assert bs.firmware.display_models["oled"].entries[1] == ("OLED_SSD1306_128X64", "SSD1306 128*64")
    assert bs.firmware.defaults_for("esp32p4")["ESPTOOLPY_FLASHSIZE_32MB"] == "y"


@pytest.mark.parametrize("board", ["tiny-oled", "acme/p4-panel", "acme/no-json", "acme/empty", "orphan-dir"])
def test_emitted_header_is_equivalent(imported: tuple[Path, object], board: str) -> None:
    out, _ = imported
    b = load_boards(out).board(board)
    parsed = parse_config_h((MINI / "main" / "boards" / board / "config.h").read_text(), board)
    upstream: list[Item] = parsed.items
    if parsed.guard:
        upstream = [Conditional([(f"ifndef {parsed.guard}", [Define(parsed.guard), *parsed.items])])]
    envs = [{**v.effective_sdkconfig, **({v.kconfig.config: "y"} if v.kconfig else {})} for v in b.variants] or [{}]
    for env in envs:
        # Token for token, as gcc -E -dM would print them: "(720)" must not come back as "720".
        assert defined_macros(emit_config_h(b), env, strict=True) == defined_macros(upstream, env, strict=True)


def test_reimport_is_stable_and_removes_stale_files(imported: tuple[Path, object]) -> None:
    out, _ = imported
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    stale = out / "acme" / "gone.yaml"
    stale.write_text("type: gone\n")
    again = import_firmware(MINI, out)
    assert again.written == [] and again.removed == [str(stale)]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_cli_import_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b"
    assert main(["boards", "import", "--firmware", str(MINI), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "imported 5 board dirs, 5 builds" in text and "orphan-dir" in text
    assert main(["boards", "check", "--boards", str(out)]) == 0
    assert "5 board files (3 with config.json), 5 variants" in capsys.readouterr().out


@pytest.mark.parametrize(("edit", "expected"), [
    (("main/boards/tiny-oled/config.json", '{"type": "x",\n "target": }'), r"config\.json:2:12: invalid JSON"),
    (("main/boards/tiny-oled/config.json", '{"type": "x", "target": "esp32s3"}'), r"config\.json:1:1: 'builds' is missing"),
    (("main/boards/tiny-oled/config.h", "#if X\n#define A 1\n"), r"config\.h:1:1: #if without matching #endif"),
    (("main/boards/tiny-oled/config.h", "#define A 1\n#endif\n"), r"config\.h:2:1: #endif without #if"),
    (("main/Kconfig.projbuild", None), r"Kconfig\.projbuild: missing Kconfig\.projbuild"),
])
def test_bad_firmware_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        edit: tuple[str, str | None], expected: str) -> None:
    import re
    import shutil

    fw = tmp_path / "fw"
    shutil.copytree(MINI, fw)
    rel, text = edit
    if text is None:
        (fw / rel).unlink()
    else:
        (fw / rel).write_text(text)
    out = tmp_path / "out"
    rc = main(["boards", "import", "--firmware", str(fw), "--out", str(out)])
    lines = capsys.readouterr().err.splitlines()
    assert re.search(expected, lines[0].replace("board dir tiny-oled not imported: ", "")), lines
    if rel.startswith("main/boards/"):
        # One broken board file: named on one line, the other boards imported, exit 0 (1 only if none could be).
        assert rc == 0 and "board dir tiny-oled not imported: " in lines[0], lines
        assert len(lines) == 2 and "1 board dir(s) not imported" in lines[1], lines
        assert (out / "acme" / "p4-panel.yaml").is_file() and not (out / "tiny-oled.yaml").exists()
    else:
        assert rc == 1 and len(lines) == 1, lines


def test_nothing_importable_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Broken boards are skipped and the import exits 0 (above); when no board at all could be imported, it exits 1
    with the board's line and a summary saying so (docs/codegen.md)."""
    import shutil

    fw = tmp_path / "fw"
    shutil.copytree(MINI, fw)
    (fw / "main/boards/tiny-oled/config.json").write_text('{"type": "x",\n "target": }')
    rc = main(["boards", "import", "--firmware", str(fw), "--out", str(tmp_path / "out"), "--board", "tiny-oled"])
    lines = capsys.readouterr().err.splitlines()
    assert rc == 1 and len(lines) == 2, lines
    assert "config.json:2:12: board dir tiny-oled not imported: invalid JSON" in lines[0], lines
    assert lines[1].startswith("no board imported"), lines


def test_a_skipped_board_reports_no_migrations(tmp_path: Path) -> None:
    """The report's migrations describe board files written: a board dir whose config.json leaves its manufacturer
    to the directory (a migration) but whose config.h is broken is skipped, and its migration is not reported."""
    import json
    import shutil

    from xzbuild.importer.run import import_firmware

    fw = tmp_path / "fw"
    shutil.copytree(MINI, fw)
    cfg = fw / "main/boards/acme/p4-panel/config.json"
    data = json.loads(cfg.read_text())
    del data["manufacturer"]
    cfg.write_text(json.dumps(data, indent=4))
    imported = import_firmware(fw, tmp_path / "ok")
    assert [m for m in imported.migrated if m.startswith("acme/p4-panel: manufacturer acme")], imported.migrated
    (fw / "main/boards/acme/p4-panel/config.h").write_text("#if X\n#define A 1\n")  # #if without #endif
    skipped = import_firmware(fw, tmp_path / "skipped")
    assert [u["dir"] for u in skipped.unimported] == ["acme/p4-panel"]
    assert not [m for m in skipped.migrated if m.startswith("acme/p4-panel")], skipped.migrated


def test_import_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`boards import --json`: the report on stdout as JSON (a CI step checking a fork reads it), the broken board
    named in `unimported` and its line still on stderr, exit 0 while other boards were imported."""
    import json
    import shutil

    fw = tmp_path / "fw"
    shutil.copytree(MINI, fw)
    (fw / "main/boards/tiny-oled/config.h").write_text("#if X\n#define A 1\n")
    rc = main(["boards", "import", "--firmware", str(fw), "--out", str(tmp_path / "out"), "--json"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert rc == 0 and report["boards"] == 4 and [u["dir"] for u in report["unimported"]] == ["tiny-oled"]
    assert "config.h:1:1" in report["unimported"][0]["why"] and report["no_config_json"] == ["acme/no-json",
                                                                                             "orphan-dir"]
    assert report["errors"] and all(e in captured.err for e in report["errors"])
    assert sorted(Path(p).name for p in report["written"] if p.endswith(".yaml") and "/_" not in p) == [
        "empty.yaml", "no-json.yaml", "orphan-dir.yaml", "p4-panel.yaml"]
