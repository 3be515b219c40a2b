"""Inputs read from a firmware tree (--firmware) or explicit dirs: ESP-SR models, otto GIFs, custom files,
and the Flash Assets choice that decides which of them a variant needs."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from assets_gen.charsets import CHARSET_FILES, basic_charset
from assets_gen.container import read_container
from assets_gen.flashmode import flash_assets
from assets_gen.mmap import member, pack_mmap
from assets_gen.plan import Overrides
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
