"""Malformed inputs give one-line user errors, never tracebacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assets_gen.font import FontOptions, collect_groups, convert_font_file, parse_ranges
from xzbuild.cli.main import main
from xzbuild.core.errors import UserError

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["assets", "font", *args])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize(("args", "needle"), [
    (["--size", "16", "--bpp", "3", "--range", "0x20-0x7E"], "--bpp 3 is not supported"),
    (["--size", "16", "--bpp", "16", "--range", "0x20-0x7E"], "use one of 1, 2, 4, 8"),
    (["--size", "0", "--bpp", "4", "--range", "0x20-0x7E"], "--size 0 is out of range"),
    (["--size", "16", "--bpp", "4"], "no characters selected"),
    (["--size", "16", "--bpp", "4", "--range", "0x7E-0x20"], "start is after end"),
    (["--size", "16", "--bpp", "4", "--range", "0x20-zz"], "'zz' is not a number"),
    (["--size", "16", "--bpp", "4", "--range", "0x20,,0x30"], "empty item"),
    (["--size", "16", "--bpp", "4", "--range", "0x110000"], "beyond U+10FFFF"),
    (["--size", "16", "--bpp", "4", "--range", "0x41=>0x61"], "remapping"),
    (["--size", "16", "--bpp", "4", "--range", "0x4E00-0x4E10"], "no glyph for any character of range 0x4E00-0x4E10"),
    (["--size", "16", "--bpp", "4", "--symbols", "\u4e00\u4e01"], "no glyph for any character of --symbols"),
    (["--size", "16", "--bpp", "4", "--symbols", ""], "--symbols: empty"),
    (["--size", "16", "--bpp", "4", "--face-index", "2", "--range", "0x41"], "face index 2 does not exist"),
])
def test_bad_options(args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.bin"
    rc, err = _run([DEJAVU, *args, "-o", str(out)], capsys)
    assert rc != 0
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_not_a_font(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bogus = tmp_path / "font.ttf"
    bogus.write_bytes(b"\x00\x01\x00\x00" + b"garbage" * 20)
    rc, err = _run([str(bogus), "--size", "16", "--bpp", "4", "--range", "0x41", "-o", str(tmp_path / "o")], capsys)
    assert rc != 0 and "not a font" in err and str(bogus) in err
    rc, err = _run([str(tmp_path / "missing.ttf"), "--size", "16", "--bpp", "4", "--range", "0x41",
                    "-o", str(tmp_path / "o")], capsys)
    assert rc != 0 and "cannot read font" in err


@pytest.mark.parametrize(("content", "needle"), [
    (b"", "no characters"),
    (b"\r\n\n", "no characters"),
    (b"abc\xff\xfe", "not valid UTF-8"),
])
def test_bad_charset_file(content: bytes, needle: str, tmp_path: Path) -> None:
    f = tmp_path / "chars.txt"
    f.write_bytes(content)
    with pytest.raises(UserError, match=needle):
        collect_groups(charset_file=f)
    with pytest.raises(UserError, match="cannot read charset file"):
        collect_groups(charset_file=tmp_path / "nope.txt")


def test_missing_code_points_are_skipped_not_fatal() -> None:
    # U+0378 is unassigned; DejaVu lacks it. The range still has glyphs, so it converts without it.
    result = convert_font_file(DEJAVU, FontOptions(12, 4), ranges=["0x370-0x37A"])
    assert 0x378 in result.missing and result.glyph_count == 11 - len(result.missing)


def test_range_parsing_matches_reference_syntax() -> None:
    groups = parse_ranges("0x20-0x22, 65 ,0X4e00")
    assert [g.codes for g in groups] == [(0x20, 0x21, 0x22), (65,), (0x4E00,)]


def test_no_traceback_in_a_real_process(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "xzbuild.cli.main", "assets", "font", "/etc/hostname", "--size",
                           "16", "--bpp", "4", "--range", "0x41", "-o", str(tmp_path / "o.bin")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "not a font" in proc.stderr
