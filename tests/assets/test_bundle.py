"""Explicit-mode bundles: byte identity with upstream's builder, validation of every input, size checks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image

from assets_gen.assemble import Bundle, assemble
from assets_gen.container import read_container
from assets_gen.explicit import build_explicit, parse_size
from assets_gen.index import FontMeta
from assets_gen.inspect import inspect_bundle
from assets_gen.load import ExplicitInputs, load_explicit
from assets_gen.verify import check_fits
from xzbuild.core.errors import UserError


@pytest.fixture()
def fixture_inputs(assets_fx: Path, model_dir: Path) -> ExplicitInputs:
    """The inputs the golden assets.bin was built from (see its README)."""
    return ExplicitInputs(
        font=assets_fx / "noto-fonts" / "cbin" / "font_noto_sans_common_20_4.bin",
        font_meta="common:20:4:noto-v1",
        emoji_dir=assets_fx / "noto-fonts" / "png" / "noto-color-emoji_64",
        wake_words=[str(model_dir)],
    )


def test_golden_bundle_and_index_are_byte_identical(fixture_inputs: ExplicitInputs, assets_fx: Path,
                                                      tmp_path: Path) -> None:
    out = tmp_path / "assets.bin"
    bundle = build_explicit(fixture_inputs, out)
    assert out.read_bytes() == (assets_fx / "assets.bin").read_bytes()
    assert bundle.index == (assets_fx / "index.json").read_bytes()
    # Determinism: a second build gives the same bytes.
    assert assemble(load_explicit(fixture_inputs)).data == bundle.data


def test_inspect_golden(assets_fx: Path) -> None:
    report = inspect_bundle((assets_fx / "assets.bin").read_bytes(), 0x100000)
    assert report.ok, report.errors
    assert report.warnings == []
    kinds = {m.name: m.kind for m in report.members}
    assert kinds["srmodels.bin"] == "srmodels" and kinds["index.json"] == "index"
    assert kinds["font_noto_sans_common_20_4.bin"] == "text_font"
    assert sum(k == "emoji" for k in kinds.values()) == 21
    font_row = next(m for m in report.members if m.kind == "text_font")
    assert "512 glyphs" in font_row.detail and "glyph push common/noto-v1" in font_row.detail


def _golden_members(assets_fx: Path) -> list[tuple[str, bytes]]:
    c = read_container((assets_fx / "assets.bin").read_bytes())
    return [(e.name, c.member(e.name) or b"") for e in c.entries]


def _repack(members: list[tuple[str, bytes]], replace: dict[str, bytes]) -> bytes:
    from assets_gen.container import pack_container

    return pack_container([(n, replace.get(n, d)) for n, d in members])


@pytest.mark.parametrize(
    ("replace", "needle"),
    [
        ({"font_noto_sans_common_20_4.bin": b"\0" * 100}, "cbin font"),
        ({"srmodels.bin": b"\5\0\0\0"}, "srmodels.bin: model 0"),
        ({"index.json": b"{not json"}, "not JSON"),
        ({"index.json": b'{"version": 2}'}, "rejects versions above 1"),
        ({"index.json": b'{"version": 1, "text_font": "nope.bin"}'}, "no such valid member"),
        ({"angry.png": b"GIF? no, garbage"}, "neither PNG nor GIF"),
        ({"index.json": b'{"skin": {"light": {"background_image": "bg.raw"}}}'}, "Apply() stops there"),
    ],
    ids=["font", "srmodels", "json", "version", "font-ref", "emoji", "skin"],
)
def test_inspect_finds_corrupted_members(assets_fx: Path, replace: dict[str, bytes], needle: str) -> None:
    report = inspect_bundle(_repack(_golden_members(assets_fx), replace))
    assert not report.ok
    assert any(needle in e for e in report.errors), report.errors


def test_inspect_warns_on_meta_that_disables_glyph_push(assets_fx: Path) -> None:
    members = _golden_members(assets_fx)
    index = json.loads(dict(members)["index.json"])
    index["text_font_meta"]["bpp"] = 1
    report = inspect_bundle(_repack(members, {"index.json": json.dumps(index).encode()}))
    assert report.ok
    assert any("glyph push off" in w for w in report.warnings)


def test_inspect_keys_are_case_insensitive_like_cjson(assets_fx: Path) -> None:
    members = _golden_members(assets_fx)
    raw = dict(members)["index.json"].replace(b'"text_font":', b'"TEXT_FONT":')
    report = inspect_bundle(_repack(members, {"index.json": raw}))
    assert report.ok and any(m.kind == "text_font" for m in report.members)


def test_font_meta_must_match_cbin_bpp(fixture_inputs: ExplicitInputs) -> None:
    fixture_inputs.font_meta = "common:20:1:noto-v1"
    with pytest.raises(UserError, match="bpp 1 but the cbin font has bpp 4"):
        assemble(load_explicit(fixture_inputs))


@pytest.mark.parametrize(
    ("meta", "needle"),
    [("common:20:4", "CHARSET:SIZE:BPP:BUNDLE"), ("full:20:4:noto-v1", "basic, common"),
     ("common:20:2:noto-v1", "1 or 4"), ("common:20:4:Noto V1", "bundle")],
)
def test_font_meta_validation(meta: str, needle: str) -> None:
    with pytest.raises(UserError, match=needle):
        FontMeta.parse(meta)


def test_bad_font_file_is_rejected(tmp_path: Path, fixture_inputs: ExplicitInputs) -> None:
    bad = tmp_path / "font.bin"
    bad.write_bytes(b"\x01" * 200)
    fixture_inputs.font, fixture_inputs.font_meta = bad, None
    with pytest.raises(UserError, match="not a usable cbin font"):
        assemble(load_explicit(fixture_inputs))


def test_member_name_collision_is_reported(tmp_path: Path, fixture_inputs: ExplicitInputs) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "angry.png").write_bytes(b"x")
    fixture_inputs.extra_files = extra
    with pytest.raises(UserError, match="both named 'angry.png'"):
        assemble(load_explicit(fixture_inputs))


def test_oversize_bundle_names_sizes_and_biggest_members(fixture_inputs: ExplicitInputs, tmp_path: Path) -> None:
    fixture_inputs.partition_size = "0x40000"
    with pytest.raises(UserError) as err:
        build_explicit(fixture_inputs, tmp_path / "a.bin")
    msg = str(err.value)
    assert "308,356 B" in msg and "262,144 B" in msg and "srmodels.bin 125,951 B" in msg
    assert not (tmp_path / "a.bin").exists()


def test_reserved_model_bytes_count_against_the_partition() -> None:
    bundle = Bundle(b"x" * 100, b"", (("a.png", 98),), (("wn9_x", 1000),))
    with pytest.raises(UserError, match="reserved for unavailable models"):
        check_fits(bundle, 500, "v")
    check_fits(bundle, 1100, "v")


def test_custom_wake_word_and_backgrounds(tmp_path: Path, model_dir: Path) -> None:
    mn = tmp_path / "mn7_cn"
    shutil.copytree(model_dir, mn)
    Image.new("RGB", (64, 48), (200, 30, 30)).save(tmp_path / "bg.png")
    inputs = ExplicitInputs(multinet=[mn], custom_wake_word="xiao tu dou=小土豆", threshold=25,
                            background=tmp_path / "bg.png", display="32x32")
    bundle = assemble(load_explicit(inputs))
    index = json.loads(bundle.index)
    assert index["multinet_model"] == {"language": "cn", "duration": 3000, "threshold": 0.25,
                                       "commands": [{"command": "xiao tu dou", "text": "小土豆", "action": "wake"}]}
    assert index["skin"]["dark"] == {"text_color": "#FFFFFF", "background_color": "#000000",
                                     "background_image": "background_dark.raw"}
    report = inspect_bundle(bundle.data)
    assert report.ok, report.errors
    assert {m.detail for m in report.members if m.kind == "background"} == {"light: RGB565 32x32", "dark: RGB565 32x32"}


@pytest.mark.parametrize(
    ("inputs", "needle"),
    [
        (ExplicitInputs(), "nothing to pack"),
        (ExplicitInputs(wake_words=["none", "x"]), "cannot be combined"),
        (ExplicitInputs(custom_wake_word="a=b"), "needs both"),
        (ExplicitInputs(font_meta="common:20:4:noto-v1", emoji_dir=None), "needs --font"),
        (ExplicitInputs(background=Path("x.png")), "--display"),
    ],
)
def test_explicit_input_errors(inputs: ExplicitInputs, needle: str) -> None:
    with pytest.raises(UserError, match=needle):
        assemble(load_explicit(inputs))


@pytest.mark.parametrize(("text", "value"), [("0x100000", 1 << 20), ("1M", 1 << 20), ("4000K", 4000 * 1024),
                                             ("2097152", 2 << 20)])
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value
    with pytest.raises(UserError):
        parse_size("lots")


def test_inspect_warns_when_background_does_not_match_the_display(tmp_path: Path) -> None:
    Image.new("RGB", (64, 48)).save(tmp_path / "bg.png")
    bundle = assemble(load_explicit(ExplicitInputs(background=tmp_path / "bg.png", display="32x16")))
    assert inspect_bundle(bundle.data, display=(32, 16)).warnings == []
    warnings = inspect_bundle(bundle.data, display=(240, 240)).warnings
    assert len(warnings) == 2 and "does not match the 240x240 display" in warnings[0]
