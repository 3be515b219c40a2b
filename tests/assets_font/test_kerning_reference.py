"""Kerning against the reference converter's own extraction, not against values pinned from our earlier runs.

Oracle: lv_font_conv 1.5.3 (npm; LVGL's converter, whose kerning step — opentype.js 1.3.4 ``getKerningValue``
per ordered glyph pair, scaled to pixels — the cbin fork 78/lv_font_conv keeps unchanged) run with
``--format dump``: its ``font_info.json`` lists each glyph's kerning in unrounded pixels. Our cbin must store, for
every ordered pair, what ``specs/assets-formats.md`` §7.9 says the cbin writer stores for that pixel value:
class format truncates toward zero; ``kern_scale`` is ``jsround(ceil(max|k| / 7.5 · 16))`` from 7.5 px up."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from assets_gen.font import FontOptions, convert_font_file, read_cbin
from tests.assets_font.test_kerning import PAIRS, make_font

REPO = Path(__file__).resolve().parents[2]
LV_FONT_CONV = REPO / ".venv" / "npm" / "node_modules" / "lv_font_conv" / "lv_font_conv.js"

SHAPES = {  # name: (feature file, legacy kern table, size, ranges)
    "pairs": (PAIRS, None, 40, ["0x20-0x7E"]),
    "multi": ("languagesystem DFLT dflt;\nlookup K1 { pos A V -80; } K1;\n"
              "lookup K2 { pos A V -999; pos A X -300; pos [B C] [V W X] 50; } K2;\n"
              "feature kern { lookup K1; lookup K2; } kern;", None, 40, ["0x20-0x7E"]),
    "latn": ("languagesystem latn dflt; feature kern { pos A V -80; } kern;", None, 40, ["0x41-0x5A"]),
    "cyrl": ("languagesystem cyrl dflt; feature kern { pos A V -80; } kern;", None, 40, ["0x41-0x5A"]),
    "ext": ("languagesystem DFLT dflt; lookup K useExtension { pos A V -80; } K; feature kern { lookup K; } kern;",
            None, 40, ["0x41-0x5A"]),
    "legacy": (None, {("A", "V"): -80, ("T", "o"): -130}, 40, ["0x20-0x7E"]),
    "big": ("languagesystem DFLT dflt; feature kern { pos A V -400; } kern;", None, 30, ["0x20-0x7E"]),
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[int, dict[int, float]]]]:
    """Each shape's font and the reference's kerning {left code: {right code: px}} (the runs in parallel)."""
    assert LV_FONT_CONV.is_file(), f"{LV_FONT_CONV} missing: `make install` installs lv_font_conv@1.5.3"
    work = tmp_path_factory.mktemp("kern-ref")
    procs = {}
    for name, (fea, legacy, size, ranges) in SHAPES.items():
        font = make_font(work / f"{name}.ttf", fea, legacy)
        cmd = ["node", str(LV_FONT_CONV), "--no-compress", "--no-prefilter", "--font", str(font)]
        for r in ranges:
            cmd += ["-r", r]
        cmd += ["--size", str(size), "--bpp", "4", "--format", "dump", "-o", str(work / name)]
        procs[name] = (font, subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    out = {}
    for name, (font, proc) in procs.items():
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        info = json.loads((work / name / "font_info.json").read_text(encoding="utf-8"))
        out[name] = (font, {g["code"]: {int(k): v for k, v in g["kerning"].items()} for g in info["glyphs"]})
    return out


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_kerning_matches_reference_extraction(name: str,
                                              reference: dict[str, tuple[Path, dict[int, dict[int, float]]]]) -> None:
    font_path, kerning = reference[name]
    _, _, size, ranges = SHAPES[name]
    font = read_cbin(convert_font_file(font_path, FontOptions(size, 4), ranges=ranges).data)
    codes = sorted(kerning)
    assert sorted(font.glyphs) == codes  # the same glyph set as the reference
    values = [v for row in kerning.values() for v in row.values()]
    if not values:
        assert font.kern is None
        return
    maxabs = max(abs(v) for v in values)
    scale = math.ceil(maxabs / 7.5 * 16) / 16 if maxabs >= 7.5 else 1.0
    assert font.kern is not None and font.kern_scale == math.floor(scale * 16 + 0.5)
    assert font.kern.classes  # these fonts have few classes: the class format
    wrong = {(chr(a), chr(b)): (font.kerning_raw(a, b), kerning[a].get(b, 0.0)) for a in codes for b in codes
             if font.kerning_raw(a, b) != math.trunc(kerning[a].get(b, 0.0))}
    assert wrong == {}
