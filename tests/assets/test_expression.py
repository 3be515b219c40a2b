"""Expression bundles from an esp_emote_assets component tree (made here from the real bundle's members)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assets_gen.bundle_plans import Overrides
from assets_gen.expression.assemble import assemble
from assets_gen.expression.load import Layers, load_inputs, vocat_staging
from assets_gen.expression.verify import verify_expression
from assets_gen.mmap import packer_order, read_mmap
from assets_gen.variants import build_variants

EMOTES = [{"emote": "happy", "src": "happy.eaf", "loop": True, "fps": 20},
          {"emote": "sad", "src": "sad.eaf", "loop": True, "fps": 20},
          {"emote": "neutral", "src": "neutral.eaf", "loop": False, "fps": 20},
          {"emote": "gone", "src": "missing.eaf"}]
LAYOUT = [{"type": "anim", "name": "eye_anim", "align": "GFX_ALIGN_CENTER"}]


@pytest.fixture(scope="module")
def real_members(shared_fixtures: Path) -> dict[str, bytes]:
    bundle = read_mmap((shared_fixtures / "mmap-assets" / "emote" / "esp32_s3_assets.bin").read_bytes(), 32)
    return {e.name: bundle.member(e) for e in bundle.entries}


def make_component(root: Path, members: dict[str, bytes], resolution: str = "320_240") -> Path:
    """A minimal esp_emote_assets tree: R/config.json, R/emote.json, R/layout.json, emoji_large/, font/."""
    (root / resolution).mkdir(parents=True)
    (root / resolution / "config.json").write_text(json.dumps(
        {"text_font": "font_puhui_deepseek_14_1", "emoji_collection": "emoji_large"}))
    (root / resolution / "emote.json").write_text(json.dumps(EMOTES))
    (root / resolution / "layout.json").write_text(json.dumps(LAYOUT))
    (root / "emoji_large").mkdir()
    for name in ("happy.eaf", "sad.eaf", "neutral.eaf", "listen.eaf", "icon_mic.bin", "battery_bg.bin"):
        (root / "emoji_large" / name).write_bytes(members[name])
    (root / "font").mkdir()
    (root / "font" / "font_puhui_deepseek_14_1.bin").write_bytes(members["font_puhui_deepseek_14_1.bin"])
    return root


def test_bundle_follows_build_py(tmp_path: Path, real_members: dict[str, bytes]) -> None:
    comp = make_component(tmp_path / "esp_emote_assets", real_members)
    bundle = assemble(load_inputs(Layers(comp), "320_240"), 32)
    parsed = read_mmap(bundle.data, 32)
    names = [e.name for e in parsed.entries]
    # Staged: font, the emotes' src files, the collection's *.bin and listen.eaf, index.json; sorted (ext, stem).
    assert names == packer_order(["font_puhui_deepseek_14_1.bin", "happy.eaf", "sad.eaf", "neutral.eaf",
                                  "listen.eaf", "icon_mic.bin", "battery_bg.bin", "index.json"])
    for e in parsed.entries:
        if e.name != "index.json":
            assert parsed.member(e) == real_members[e.name]
    index = json.loads(parsed.member(parsed.find("index.json")))  # type: ignore[arg-type]
    assert list(index) == ["version", "text_font", "emoji_collection", "icon_collection", "layout"]
    assert index["emoji_collection"][0] == {"name": "happy", "file": "happy.eaf", "eaf": {"loop": True, "fps": 20}}
    assert index["emoji_collection"][3] == {"name": "gone", "file": "missing.eaf", "eaf": {"lack": True}}
    assert [i["name"] for i in index["icon_collection"]] == ["battery_bg", "icon_mic", "listen"]
    assert index["layout"] == LAYOUT
    raw = parsed.member(parsed.find("index.json"))  # type: ignore[arg-type]
    assert raw == json.dumps(index, indent=4, ensure_ascii=False).encode() and not raw.endswith(b"\n")
    report = verify_expression(bundle.data, 32)
    assert report.ok and any("missing.eaf" in w for w in report.warnings)


def test_short_name_length_cuts_names(tmp_path: Path, real_members: dict[str, bytes]) -> None:
    comp = make_component(tmp_path / "c", real_members)
    bundle = assemble(load_inputs(Layers(comp), "320_240"), 16)
    assert "font_puhui_deepseek_14_1.bin" in bundle.cut_names
    assert "font_puhui_deeps" in [e.name for e in read_mmap(bundle.data, 16).entries]
    # The reader compares at most name-length bytes, so the cut name still resolves; it is reported.
    report = verify_expression(bundle.data, 16)
    assert report.ok and any("cut by the packer" in w for w in report.warnings)


@pytest.mark.parametrize(
    ("break_it", "message"),
    [(lambda c: (c / "320_240" / "config.json").unlink(), "config.json"),
     (lambda c: (c / "font" / "font_puhui_deepseek_14_1.bin").unlink(), "font_puhui_deepseek_14_1.bin"),
     (lambda c: (c / "320_240" / "emote.json").write_text("{}"), "emote.json")],
    ids=["no-config", "no-font", "bad-emote-json"],
)
def test_bad_component_is_one_clear_error(tmp_path: Path, real_members: dict[str, bytes], break_it,  # type: ignore[no-untyped-def]
                                          message: str) -> None:
    from xzbuild.core.errors import UserError

    comp = make_component(tmp_path / "c", real_members)
    break_it(comp)
    with pytest.raises(UserError, match=message.replace(".", r"\.")):
        load_inputs(Layers(comp), "320_240")


def test_vocat_variant_from_a_firmware_tree(repo_root: Path, tmp_path: Path, real_members: dict[str, bytes],
                                            upstream_tree: Path) -> None:
    """ESP-VoCat: 360_360 with EMOTE_EXTERNAL_PATH staging of the board's emote.json and .eaf files (real
    upstream board files), CONFIG_MMAP_FILE_NAME_LENGTH=32."""
    fw = tmp_path / "fw"
    (fw / "main").mkdir(parents=True)
    (fw / "main" / "boards").symlink_to(upstream_tree / "main" / "boards")
    comp = make_component(fw / "managed_components" / "espressif2022__esp_emote_assets", real_members, "360_360")
    board = upstream_tree / "main" / "boards" / "espressif" / "esp-vocat"
    staged = vocat_staging(comp, board, "360_360")
    assert "360_360/emote.json" in staged and "emoji_large/low_battery.eaf" in staged
    [r] = build_variants(repo_root / "boards", ["esp-vocat"], False, tmp_path / "out", Overrides(firmware=fw),
                         cache_dir=tmp_path / "cache")
    assert r.status == "ok", r.reason
    data = Path(r.path).read_bytes()
    parsed = read_mmap(data, 32)
    board_emotes = json.loads((board / "assets" / "360_360" / "emote.json").read_text())
    index = json.loads(parsed.member(parsed.find("index.json")))  # type: ignore[arg-type]
    assert [e["name"] for e in index["emoji_collection"]] == list(dict.fromkeys(e["emote"] for e in board_emotes))
    for eaf in ("low_battery.eaf", "battery_connected.eaf"):
        if any(e["src"] == eaf for e in board_emotes):
            assert parsed.member(parsed.find(eaf)) == (board / "emoji" / eaf).read_bytes()  # type: ignore[arg-type]
    # Without the component the variant is skipped as a missing input.
    [missing] = build_variants(repo_root / "boards", ["esp-vocat"], False, tmp_path / "o2", Overrides(),
                               cache_dir=tmp_path / "cache")
    assert missing.status == "skipped" and "esp_emote_assets" in missing.reason


def test_inspect_and_preview_cli(shared_fixtures: Path, tmp_path: Path) -> None:
    from PIL import Image

    from xzbuild.cli.main import main

    real = shared_fixtures / "mmap-assets" / "emote" / "esp32_s3_assets.bin"
    assert main(["assets", "inspect", str(real)]) == 0
    assert main(["assets", "inspect", str(real), "--partition-size", "0x100000"]) != 0  # 1.7 MB bundle
    broken = tmp_path / "broken.bin"
    data = bytearray(real.read_bytes())
    data[5000] ^= 0xFF
    broken.write_bytes(bytes(data))
    assert main(["assets", "inspect", str(broken)]) != 0
    out = tmp_path / "sheet.png"
    assert main(["assets", "preview", str(real), "-o", str(out)]) == 0
    with Image.open(out) as sheet:
        assert sheet.width >= 800 and sheet.height >= 400


def test_first_frame_of_an_eaf(real_members: dict[str, bytes]) -> None:
    from assets_gen.expression.eaf import first_frame, frame_count

    eye = first_frame(real_members["happy.eaf"])
    assert frame_count(real_members["happy.eaf"]) == 43 and eye.size == (125, 160)
    r, g, b, _ = eye.getpixel((eye.width // 2, eye.height // 2))  # type: ignore[misc]
    assert min(r, g, b) > 200 and eye.getpixel((0, 0))[:3] == (0, 0, 0)  # type: ignore[index]
