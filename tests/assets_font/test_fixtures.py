"""Byte identity with the reference converter's outputs in ../shared/fixtures/fonts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from assets_gen.font import FontOptions, convert_font_file, freetype_version, read_cbin
from xzbuild.cli.main import cli

FIXTURES = ["dejavu_sans_16_4.bin", "dejavu_sans_14_1_autohint_off.bin", "noto_sans_cjk_sc_20_4.bin"]


def _entry(manifest: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(e for e in manifest if e["file"] == name)


@pytest.mark.parametrize("name", FIXTURES)
def test_byte_identical_to_reference(name: str, font_manifest: list[dict[str, Any]], shared_fixtures: Path) -> None:
    e = _entry(font_manifest, name)
    options = FontOptions(size=e["size"], bpp=e["bpp"], face_index=e["source"]["face_index"],
                          autohint_off=e["autohint_off"])
    result = convert_font_file(e["source"]["path"], options, ranges=[e["ranges"]])
    expected = (shared_fixtures / "fonts" / name).read_bytes()
    assert len(result.data) == e["output_size"] == len(expected)
    assert hashlib.sha256(result.data).hexdigest() == e["output_sha256"], f"differs (FreeType {freetype_version()})"
    assert result.data == expected


def test_cjk_fixture_skips_missing_code_points(font_manifest: list[dict[str, Any]]) -> None:
    e = _entry(font_manifest, "noto_sans_cjk_sc_20_4.bin")
    result = convert_font_file(e["source"]["path"], FontOptions(20, 4, face_index=2), ranges=[e["ranges"]])
    assert result.glyph_count == 512
    assert len(result.missing) == 15 and 0xFF00 in result.missing
    assert result.requested == 95 + 64 + 128 + 240
    assert result.kerned_glyphs > 0


def test_cli_writes_identical_bytes(tmp_path: Path, font_manifest: list[dict[str, Any]],
                                    shared_fixtures: Path) -> None:
    e = _entry(font_manifest, "dejavu_sans_14_1_autohint_off.bin")
    out = tmp_path / "f.bin"
    res = CliRunner().invoke(cli, ["assets", "font", e["source"]["path"], "--size", "14", "--bpp", "1",
                                   "--range", e["ranges"], "--autohint-off", "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["glyphs"] == 95 and summary["freetype"] == freetype_version()
    assert out.read_bytes() == (shared_fixtures / "fonts" / e["file"]).read_bytes()


def test_symbols_and_charset_file_select_the_same_glyphs(tmp_path: Path, font_manifest: list[dict[str, Any]],
                                                         shared_fixtures: Path) -> None:
    """The same code points given as text (symbols / charset file) give the same bytes as ranges."""
    e = _entry(font_manifest, "dejavu_sans_16_4.bin")
    text = "".join(chr(c) for c in range(0x20, 0x7F))
    charset = tmp_path / "ascii.txt"
    charset.write_text(text[:40] + "\n" + text[40:] + "\n", encoding="utf-8")
    expected = (shared_fixtures / "fonts" / e["file"]).read_bytes()
    options = FontOptions(16, 4)
    assert convert_font_file(e["source"]["path"], options, symbols=text[::-1]).data == expected
    assert convert_font_file(e["source"]["path"], options, charset_file=charset).data == expected


@pytest.mark.parametrize(("name", "line_height", "base_line", "underline", "cmap_types", "kern_classes"), [
    ("dejavu_sans_16_4.bin", 18, 5, (0, 1), [2], None),
    ("dejavu_sans_14_1_autohint_off.bin", 15, 3, (0, 1), [2], None),
    ("noto_sans_cjk_sc_20_4.bin", 38, 11, (-2, 1), [2, 2, 2, 2, 0], True),
])
def test_reader_decodes_reference_files(name: str, line_height: int, base_line: int, underline: tuple[int, int],
                                        cmap_types: list[int], kern_classes: bool | None,
                                        shared_fixtures: Path) -> None:
    font = read_cbin((shared_fixtures / "fonts" / name).read_bytes())
    assert (font.line_height, font.base_line) == (line_height, base_line)
    assert (font.underline_position, font.underline_thickness) == underline
    assert [c.format for c in font.cmaps] == cmap_types
    assert (font.kern.classes if font.kern else None) == kern_classes
    assert font.glyph_dsc_count == len(font.glyphs) + 2  # entry 0 and the trailing zero entry
    for g in font.glyphs.values():
        alpha = g.alpha()
        assert len(alpha) == g.box_w * g.box_h
        assert -font.base_line <= g.ofs_y and g.ofs_y + g.box_h <= line_height - font.base_line
    a = font.glyph(ord("A"))
    assert a is not None and a.box_w > 5 and max(a.alpha()) == 255
    assert font.glyph(0x7F) is None


def test_reader_cjk_details(shared_fixtures: Path) -> None:
    font = read_cbin((shared_fixtures / "fonts" / "noto_sans_cjk_sc_20_4.bin").read_bytes())
    full = [c for c in font.cmaps if c.format_name == "format0_full"]
    assert len(full) == 1 and full[0].range_start == 0xFFC2 and full[0].range_length == full[0].list_length == 45
    assert len(font.glyphs) == 512 and font.kern_scale == 16
    assert 0xFF00 not in font.glyphs and 0x4E00 in font.glyphs
    assert any(font.kerning_raw(left, right) for left in range(0x20, 0x7F) for right in range(0x20, 0x7F))


def test_concurrent_conversions_in_threads(font_manifest: list[dict[str, Any]], shared_fixtures: Path) -> None:
    """The bundle builder may convert fonts from worker threads; results must not interfere."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [_entry(font_manifest, name) for name in FIXTURES] * 2

    def run(e: dict[str, Any]) -> bytes:
        options = FontOptions(e["size"], e["bpp"], e["source"]["face_index"], e["autohint_off"])
        return convert_font_file(e["source"]["path"], options, ranges=[e["ranges"]]).data

    with ThreadPoolExecutor(max_workers=4) as pool:
        outputs = list(pool.map(run, jobs))
    for e, data in zip(jobs, outputs, strict=True):
        assert data == (shared_fixtures / "fonts" / e["file"]).read_bytes()


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
@pytest.mark.parametrize("name", FIXTURES)
def test_same_bytes_however_rendering_is_split(name: str, threads: int, font_manifest: list[dict[str, Any]],
                                               shared_fixtures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Glyphs rendered by 1-4 threads, in chunks of 7, each thread with its own face: the reference's bytes."""
    import assets_gen.font.convert as convert

    monkeypatch.setattr(convert, "_PARALLEL_MIN_GLYPHS", 1)
    monkeypatch.setattr(convert, "_CHUNK", 7)
    monkeypatch.setattr(convert, "_MAX_THREADS", threads)
    monkeypatch.setattr(convert.os, "sched_getaffinity", lambda _pid: set(range(threads)), raising=False)
    assert convert._render_threads(512) == threads
    e = _entry(font_manifest, name)
    options = FontOptions(e["size"], e["bpp"], e["source"]["face_index"], e["autohint_off"])
    data = convert_font_file(e["source"]["path"], options, ranges=[e["ranges"]]).data
    assert data == (shared_fixtures / "fonts" / e["file"]).read_bytes()
