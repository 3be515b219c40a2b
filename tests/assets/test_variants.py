"""Per-variant bundles from the real board model: contents, partition checks, caching, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from assets_gen.bundle_plans import Overrides, VariantPlan, plan_variants
from assets_gen.cache import Cache
from assets_gen.container import read_container
from assets_gen.inspect import inspect_bundle
from assets_gen.variants import VariantResult, build_variants

LCD = "bread-compact-wifi-lcd"      # ESP32-S3 + PSRAM, 16 MB: font 16_4, emoji 32, AFE wake word
OLED_4M = "bread-compact-esp32-lcd"  # ESP32 without PSRAM, 4 MB table (1 MB assets): font 14_1, no wake word


@pytest.fixture(scope="module")
def built(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[VariantResult]]:
    work = tmp_path_factory.mktemp("variants")
    out, cache = work / "out", work / "cache"
    results = build_variants(repo_root / "boards", [LCD, OLED_4M], False, out, Overrides(), jobs=2, cache_dir=cache)
    return out, cache, results


def test_bundles_are_built_and_pass_inspect(built: tuple[Path, Path, list[VariantResult]]) -> None:
    out, _, results = built
    assert [(r.name, r.status) for r in results] == [(LCD, "ok"), (OLED_4M, "ok")]
    for r in results:
        data = Path(r.path).read_bytes()
        assert len(data) == r.size <= (r.partition_size or 0)
        report = inspect_bundle(data, r.partition_size)
        assert report.ok, report.errors
        record = json.loads((out / r.name / "assets.json").read_text())
        assert record["key"] == r.key and record["size"] == r.size


def test_lcd_bundle_contents(built: tuple[Path, Path, list[VariantResult]]) -> None:
    _, _, results = built
    lcd = results[0]
    report = inspect_bundle(Path(lcd.path).read_bytes())
    index = report.index or {}
    assert index["text_font"] == "text_noto_sans_sc_16_4.bin"
    assert "text_font_meta" not in index  # our Debian-built font is not the noto-v1 glyph-push font
    assert len(index["emoji_collection"]) == 21
    assert {m.detail.split(": ")[1] for m in report.members if m.kind == "emoji"} == {"PNG 32x32"}
    font = next(m for m in report.members if m.kind == "text_font")
    assert f"{_expected_glyphs(LCD)} glyphs, bpp 4" in font.detail
    assert lcd.partition_size == 8 * 1024 * 1024
    assert any("wn9_nihaoxiaozhi_tts: room reserved" in n for n in lcd.notes)


def _expected_glyphs(variant: str) -> int:
    """Outside reference for the glyph count: the code points of the shipped charset file (read here) that the
    source face maps (fontTools' cmap), since the converter keeps exactly those (../shared/fixtures/fonts: the
    reference skips code points the face lacks)."""
    import json

    from fontTools.ttLib import TTCollection, TTFont

    [plan] = plan_variants(Path(__file__).resolve().parents[2] / "boards", [variant], False, Overrides(), Cache(None))
    assert plan.font is not None
    doc = json.loads((Path(__file__).resolve().parents[2] / "assets_gen" / "data" /
                      f"charset_{plan.font.charset}.json").read_text(encoding="utf-8"))
    codes: set[int] = set()
    for item in doc["ranges"]:
        lo, _, hi = item.partition("-")
        codes.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    source = str(plan.font.source)
    face = (TTCollection(source, lazy=True).fonts[plan.font.face_index] if source.endswith(".ttc")
            else TTFont(source, lazy=True))
    return len(codes & set(face.getBestCmap()))


def test_oled_4m_bundle(built: tuple[Path, Path, list[VariantResult]]) -> None:
    _, _, results = built
    oled = results[1]
    assert oled.partition_size == 1024 * 1024
    names = [n for n, _ in oled.members]
    assert names == ["text_noto_sans_sc_14_1.bin", "index.json"]  # no emoji collection, wake word disabled


def test_warm_run_is_cached_and_identical(built: tuple[Path, Path, list[VariantResult]], repo_root: Path) -> None:
    out, cache, results = built
    before = {r.name: Path(r.path).read_bytes() for r in results}
    again = build_variants(repo_root / "boards", [LCD, OLED_4M], False, out, Overrides(), cache_dir=cache)
    assert [r.status for r in again] == ["cached", "cached"]
    assert {r.name: Path(r.path).read_bytes() for r in again} == before


def test_fresh_cache_gives_identical_bytes(built: tuple[Path, Path, list[VariantResult]], repo_root: Path,
                                           tmp_path: Path) -> None:
    _, _, results = built
    fresh = build_variants(repo_root / "boards", [OLED_4M], False, tmp_path / "o", Overrides(), cache_dir=tmp_path / "c")
    assert Path(fresh[0].path).read_bytes() == Path(results[1].path).read_bytes()


def test_font_too_big_for_the_partition_falls_back_to_its_basic_charset(
        repo_root: Path, built: tuple[Path, Path, list[VariantResult]], tmp_path: Path, upstream_tree: Path) -> None:
    """waveshare-esp32-touch-lcd-3.5: ESP32 on the 4 MB table (1 MiB assets); the common-charset 20 px font
    alone is 1.5 MB, so the bundle carries the named font's own basic charset (xiaozhi-fonts' rule)."""
    from assets_gen.charsets import basic_charset
    from assets_gen.fontcheck import check_cbin_font
    from xzbuild.core.errors import Location

    _, cache, _ = built
    [r] = build_variants(repo_root / "boards", ["waveshare-esp32-touch-lcd-3.5"], False, tmp_path, Overrides(),
                         cache_dir=cache)
    assert r.status == "ok" and r.size <= 1_048_576 and any("basic charset" in n for n in r.notes)
    report = inspect_bundle((tmp_path / r.name / "assets.bin").read_bytes(), 1_048_576)
    assert report.ok
    font = read_container((tmp_path / r.name / "assets.bin").read_bytes()).member("text_noto_sans_sc_20_4.bin")
    assert font is not None
    info = check_cbin_font(font, Location("font"))
    # Outside reference: the basic tier recomputed from the upstream firmware's own locale files (the
    # converter keeps the code points the face has, so at most that many glyphs).
    basic = basic_charset(upstream_tree / "main" / "assets" / "locales")
    assert 500 < info.glyphs <= len(basic)
    [again] = build_variants(repo_root / "boards", ["waveshare-esp32-touch-lcd-3.5"], False, tmp_path, Overrides(),
                             cache_dir=cache)
    assert again.status == "cached"


# The Flash Assets choice of each variant, as upstream's Kconfig resolves it from the board's config.json
# (main/boards/*/config.json sdkconfig_append; main/Kconfig.projbuild defaults).
FLASH_MODES = [
    ("esp-box-3", "default", ""),  # allows the emote style but does not select it: default assets
    ("esp-vocat", "expression", ""),  # USE_EMOTE_MESSAGE_STYLE + FLASH_EXPRESSION_ASSETS
    ("esp-sensairshuttle", "custom", ""),  # FLASH_CUSTOM_ASSETS with a URL
    ("lceda-course-examples-eda-robot-pro", "default", "no assets partition"),
]


@pytest.mark.parametrize(("variant", "mode", "skip"), FLASH_MODES)
def test_flash_assets_choice(repo_root: Path, variant: str, mode: str, skip: str) -> None:
    [plan] = plan_variants(repo_root / "boards", [variant], False, Overrides(), Cache(None))
    assert (plan.mode if not plan.skip else "default", skip in plan.skip) == (mode, True)


def test_overrides_emoji_dir_and_background(repo_root: Path, built: tuple[Path, Path, list[VariantResult]],
                                            tmp_path: Path) -> None:
    _, cache, _ = built
    emoji = tmp_path / "emoji"
    emoji.mkdir()
    Image.new("RGBA", (100, 100), (0, 200, 0, 255)).save(emoji / "happy.png")
    Image.new("RGB", (640, 480), (10, 20, 200)).save(tmp_path / "bg.jpg")
    ov = Overrides(emoji_dir=emoji, background=tmp_path / "bg.jpg", wake_words=["none"])
    [r] = build_variants(repo_root / "boards", [LCD], False, tmp_path / "out", ov, cache_dir=cache)
    assert r.status == "ok", r.reason
    report = inspect_bundle(Path(r.path).read_bytes())
    details = sorted(m.detail for m in report.members if m.kind in ("emoji", "background"))
    assert details == ["dark: RGB565 240x320", "happy: PNG 32x32", "light: RGB565 240x320"]
    assert "srmodels" not in (report.index or {})


def test_plan_json_roundtrip(repo_root: Path) -> None:
    plans = plan_variants(repo_root / "boards", [LCD], False, Overrides(), Cache(None))
    assert [VariantPlan.from_json(p.to_json()) for p in plans] == plans


def test_esp_sr_models_are_packed(repo_root: Path, shared_fixtures: Path, built: tuple[Path, Path, list[VariantResult]],
                                  tmp_path: Path) -> None:
    """xmini-c3: ESP32-C3 with CONFIG_USE_ESP_WAKE_WORD, so the WakeNet9s model goes into the bundle."""
    from assets_gen.container import read_container

    _, cache, _ = built
    [r] = build_variants(repo_root / "boards", ["xmini-c3"], False, tmp_path, Overrides(esp_sr=shared_fixtures / "esp-sr"),
                         cache_dir=cache)
    assert r.status == "ok", r.reason
    c = read_container(Path(r.path).read_bytes())
    assert c.member("srmodels.bin") == (shared_fixtures / "esp-sr" / "srmodels.bin").read_bytes()
    assert not any("room reserved" in n for n in r.notes)


def test_font_override_converts_at_each_variant_profile(repo_root: Path, built: tuple[Path, Path, list[VariantResult]],
                                                        tmp_path: Path) -> None:
    _, cache, _ = built
    dejavu = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    [r] = build_variants(repo_root / "boards", [OLED_4M], False, tmp_path, Overrides(font=dejavu), cache_dir=cache)
    assert r.status == "ok", r.reason
    assert r.members[0][0] == "text_dejavusans_14_1.bin"
    font = next(m for m in inspect_bundle(Path(r.path).read_bytes()).members if m.kind == "text_font")
    assert "bpp 1" in font.detail


def test_shared_font_is_made_once(repo_root: Path, built: tuple[Path, Path, list[VariantResult]], tmp_path: Path) -> None:
    """Two more 14_1 variants reuse the one cached 14_1 font: the cache still holds two fonts (16_4, 14_1)."""
    _, cache, _ = built
    fonts_before = sorted(p.name for p in (cache / "font").rglob("*") if p.is_file())
    results = build_variants(repo_root / "boards", ["bread-compact-wifi", "bread-compact-wifi-128x64"], False,
                             tmp_path, Overrides(), cache_dir=cache)
    assert [r.status for r in results] == ["ok", "ok"]
    fonts_after = sorted(p.name for p in (cache / "font").rglob("*") if p.is_file())
    assert fonts_after == fonts_before
    assert results[0].members[0] == results[1].members[0]
    assert results[0].members[0][0] == "text_noto_sans_sc_14_1.bin"
