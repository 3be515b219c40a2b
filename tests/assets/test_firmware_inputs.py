"""Inputs read from a firmware tree (--firmware) or explicit dirs: ESP-SR models, otto GIFs, custom files,
and the Flash Assets choice that decides which of them a variant needs."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from assets_gen.bundle_plans import Overrides
from assets_gen.charsets import CHARSET_FILES, basic_charset
from assets_gen.container import read_container
from assets_gen.flashmode import flash_assets
from assets_gen.mmap import member, pack_mmap
from assets_gen.srmodels import load_model_dir, pack_srmodels
from assets_gen.textfont import load_charset
from assets_gen.variants import build_variants


def firmware_tree(root: Path, shared: Path, *, esp_sr: bool = False, otto: bool = False) -> Path:
    """A firmware checkout as the component manager leaves it (managed components are symlinks here)."""
    (root / "main").mkdir(parents=True)
    mc = root / "managed_components"
    mc.mkdir()
    if esp_sr:
        (mc / "espressif__esp-sr").mkdir()
        (mc / "espressif__esp-sr" / "model").symlink_to(shared / "esp-sr")
    if otto:
        (mc / "txp666__otto-emoji-gif-component").mkdir()
        (mc / "txp666__otto-emoji-gif-component" / "gifs").symlink_to(shared / "assets-otto-gif" / "gifs")
    return root


def test_wake_word_model_from_the_firmware_tree(repo_root: Path, shared_fixtures: Path, tmp_path: Path) -> None:
    """kevin-c3 selects wn9s_nihaoxiaozhi; with ESP-SR in managed_components/ the pack is ESP-SR's own."""
    fw = firmware_tree(tmp_path / "fw", shared_fixtures, esp_sr=True)
    [r] = build_variants(repo_root / "boards", ["kevin-c3"], False, tmp_path / "out", Overrides(firmware=fw),
                         cache_dir=tmp_path / "c")
    assert r.status == "ok" and not any("reserved" in n for n in r.notes)
    c = read_container(Path(r.path).read_bytes())
    assert c.member("srmodels.bin") == (shared_fixtures / "esp-sr" / "srmodels.bin").read_bytes()


def _spec_srmodels(models: list[Path]) -> bytes:
    """An independent writer of spec §5 (ESP-SR pack_model.py layout), files in code-point order."""
    listing = [(m.name, sorted(p for p in m.iterdir() if p.is_file())) for m in sorted(models, key=lambda p: p.name)]
    header_len = 4 + sum(36 + 40 * len(files) for _, files in listing)
    head, body = bytearray(struct.pack("<I", len(listing))), bytearray()
    for name, files in listing:
        head += name.encode().ljust(32, b"\0") + struct.pack("<I", len(files))
        for f in files:
            data = f.read_bytes()
            head += f.name.encode().ljust(32, b"\0") + struct.pack("<II", header_len + len(body), len(data))
            body += data
    return bytes(head + body)


def test_wakenet_plus_multinet_pack(shared_fixtures: Path) -> None:
    sr = shared_fixtures / "esp-sr"
    wn, mn, fst = sr / "wakenet_model" / "wn9s_nihaoxiaozhi", sr / "multinet_model" / "mn7_cn", sr / "multinet_model" / "fst"
    # The judge first reproduces both reference packs made by ESP-SR's packer ...
    assert _spec_srmodels([wn]) == (sr / "srmodels.bin").read_bytes()
    golden = read_container((shared_fixtures / "assets-custom-wake-word" / "assets.bin").read_bytes())
    assert _spec_srmodels([mn, fst]) == golden.member("srmodels.bin")
    # ... then judges the combined WakeNet + MultiNet pack.
    packed = pack_srmodels([load_model_dir(p) for p in (wn, mn, fst)])
    assert packed == _spec_srmodels([wn, mn, fst])


def test_otto_gif_collection(repo_root: Path, shared_fixtures: Path, tmp_path: Path) -> None:
    """otto-robot names otto-gif: the component's GIFs are packed unchanged, indexed by stem, as upstream's
    golden bundle has them."""
    golden = read_container((shared_fixtures / "assets-otto-gif" / "assets.bin").read_bytes())
    golden_index = json.loads(golden.member("index.json") or b"")
    fw = firmware_tree(tmp_path / "fw", shared_fixtures, otto=True)
    for ov in (Overrides(firmware=fw), Overrides(otto_gif=shared_fixtures / "assets-otto-gif" / "gifs")):
        [r] = build_variants(repo_root / "boards", ["otto-robot"], False, tmp_path / "out", ov, cache_dir=tmp_path / "c")
        assert r.status in ("ok", "cached"), r.reason
        c = read_container(Path(r.path).read_bytes())
        index = json.loads(c.member("index.json") or b"")
        assert index["emoji_collection"] == golden_index["emoji_collection"]
        for e in golden_index["emoji_collection"]:
            assert c.member(e["file"]) == golden.member(e["file"])
    [missing] = build_variants(repo_root / "boards", ["otto-robot"], False, tmp_path / "o2", Overrides(),
                               cache_dir=tmp_path / "c")
    assert missing.status == "skipped" and "otto-gif" in missing.reason


def test_custom_assets_url(repo_root: Path, shared_fixtures: Path, tmp_path: Path) -> None:
    """esp-sensairshuttle flashes a URL: offline it is a missing input; a local copy is checked with the
    reader the firmware uses (emote style: esp_mmap_assets, 16-byte names by default) and copied."""
    name = "wn9_nihaoxiaozhi_tts-font_puhui_common_20_4-echoear.bin"
    [missing] = build_variants(repo_root / "boards", ["esp-sensairshuttle"], False, tmp_path / "o", Overrides(),
                               cache_dir=tmp_path / "c")
    assert missing.status == "skipped" and name in missing.reason and "URL" in missing.reason
    downloads = tmp_path / "dl"
    downloads.mkdir()
    good = pack_mmap([member("index.json", b'{"version": 1}')], 16)
    (downloads / name).write_bytes(good)
    [ok] = build_variants(repo_root / "boards", ["esp-sensairshuttle"], False, tmp_path / "o", Overrides(
        custom_assets=downloads), cache_dir=tmp_path / "c")
    assert ok.status == "ok" and Path(ok.path).read_bytes() == good
    (downloads / name).write_bytes(good[:-3])
    [bad] = build_variants(repo_root / "boards", ["esp-sensairshuttle"], False, tmp_path / "o", Overrides(
        custom_assets=downloads), cache_dir=tmp_path / "c")
    assert bad.status == "failed" and "stored length" in bad.reason


# (sdkconfig, emote style allowed) -> mode, per main/Kconfig.projbuild's "Flash Assets" choice
CHOICES = [
    ({}, False, "default"),
    ({"USE_EMOTE_MESSAGE_STYLE": "y"}, True, "expression"),
    ({"USE_EMOTE_MESSAGE_STYLE": "y"}, False, "default"),  # the style depends on the board type
    ({"FLASH_NONE_ASSETS": "y"}, False, "none"),
    ({"FLASH_CUSTOM_ASSETS": "y", "USE_EMOTE_MESSAGE_STYLE": "y"}, True, "custom"),
    ({"FLASH_EXPRESSION_ASSETS": "y"}, False, "default"),  # depends on USE_EMOTE_MESSAGE_STYLE
    ({"FLASH_DEFAULT_ASSETS": "y", "USE_EMOTE_MESSAGE_STYLE": "y"}, True, "expression"),  # depends on !emote
]


@pytest.mark.parametrize(("config", "allowed", "mode"), CHOICES)
def test_flash_assets_choice_table(config: dict[str, str], allowed: bool, mode: str) -> None:
    assert flash_assets(config, allowed).mode == mode


def test_none_assets_is_reported(repo_root: Path, tmp_path: Path) -> None:
    import shutil

    boards = tmp_path / "boards"
    shutil.copytree(repo_root / "boards", boards)
    f = boards / "bread-compact-wifi.yaml"
    text = f.read_text()
    head = "variants:\n- name: bread-compact-wifi\n  sdkconfig:\n"
    assert head in text
    f.write_text(text.replace(head, head + "    FLASH_NONE_ASSETS: y\n", 1))
    [r] = build_variants(boards, ["bread-compact-wifi"], False, tmp_path / "o", Overrides(), cache_dir=tmp_path / "c")
    assert r.status == "skipped" and "FLASH_NONE_ASSETS" in r.reason


def test_shipped_basic_charset_matches_upstream_locales(upstream_tree: Path) -> None:
    assert set(load_charset(CHARSET_FILES["basic"])) == basic_charset(upstream_tree / "main" / "assets" / "locales")


def test_custom_wake_word_bundle_matches_upstream(shared_fixtures: Path, tmp_path: Path) -> None:
    """The reference bundle of build_default_assets.py for CONFIG_USE_CUSTOM_WAKE_WORD + MultiNet7 (+ fst)."""
    from xzbuild.cli.main import main

    sr = shared_fixtures / "esp-sr" / "multinet_model"
    out = tmp_path / "assets.bin"
    assert main(["assets", "build", "-o", str(out), "--multinet", str(sr / "mn7_cn"), "--multinet", str(sr / "fst"),
                 "--custom-wake-word", "ni hao xiao zhi=你好小智", "--threshold", "20"]) == 0
    assert out.read_bytes() == (shared_fixtures / "assets-custom-wake-word" / "assets.bin").read_bytes()


SORTED_WALK = """
import os, runpy, sys
_walk = os.walk
def walk(*a, **k):
    for root, dirs, files in _walk(*a, **k):
        dirs.sort(); files.sort()
        yield root, dirs, files
os.walk = walk
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_fonts_component_bundle_is_upstreams(repo_root: Path, shared_fixtures: Path, tmp_path: Path,
                                             upstream_tree: Path) -> None:
    """With xiaozhi-fonts at hand the variant bundle equals upstream's build_default_assets.py output on the
    same inputs (run here from the pinned upstream commit, through a sorted os.walk as the fixtures were)."""
    import subprocess
    import sys

    from assets_gen.bundle_plans import plan_variants
    from assets_gen.cache import Cache
    from assets_gen.mmap import read_mmap

    variant = "bread-compact-esp32-lcd"  # ESP32 without PSRAM: font 14_1, no wake word
    [plan] = plan_variants(repo_root / "boards", [variant], False, Overrides(), Cache(None))
    assert plan.font is not None
    fonts = tmp_path / "xiaozhi-fonts"
    (fonts / "cbin").mkdir(parents=True)
    (fonts / "manifest.json").write_text('{"bundle_id": "noto-v1"}')
    real = read_mmap((shared_fixtures / "mmap-assets" / "emote" / "esp32_s3_assets.bin").read_bytes(), 32)
    cbin = real.member(real.find("font_puhui_deepseek_14_1.bin"))  # type: ignore[arg-type]  # a real 14_1 cbin
    (fonts / "cbin" / f"font_noto_sans_common_{plan.font.size}_{plan.font.bpp}.bin").write_bytes(cbin)
    [ours] = build_variants(repo_root / "boards", [variant], False, tmp_path / "out", Overrides(fonts=fonts),
                            cache_dir=tmp_path / "c")
    assert ours.status == "ok", ours.reason
    data = Path(ours.path).read_bytes()
    c = read_container(data)
    coll = fonts / "png" / "xz"
    coll.mkdir(parents=True)
    for e in c.entries:
        if e.name.endswith(".png"):
            (coll / e.name).write_bytes(c.member(e.name) or b"")
    (tmp_path / "sdkconfig").write_text("")
    ref = tmp_path / "ref.bin"
    subprocess.run([sys.executable, "-c", SORTED_WALK, str(upstream_tree / "scripts" / "build_default_assets.py"),
                    "--sdkconfig", str(tmp_path / "sdkconfig"), "--output", str(ref),
                    "--builtin_text_font", f"font_noto_sans_basic_{plan.font.size}_{plan.font.bpp}",
                    *(["--emoji_collection", "xz"] if plan.emoji else []), "--noto_fonts_path", str(fonts),
                    "--esp_sr_model_path", str(tmp_path / "none")], check=True, capture_output=True)
    assert data == ref.read_bytes()
    index = json.loads(c.member("index.json") or b"")
    assert index["text_font_meta"] == {"charset": "common", "size": plan.font.size, "bpp": plan.font.bpp,
                                       "bundle": "noto-v1"}
