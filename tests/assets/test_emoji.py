"""Emoji collections: rendering from Noto Color Emoji, directory validation, resizing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image, features

from assets_gen.emoji import (
    EMOTIONS,
    NOTO_COLOR_EMOJI,
    check_size,
    collection_report,
    image_size,
    load_emoji_dir,
    render_font_collection,
    resize_collection,
)
from xzbuild.core.errors import UserError

FIXTURE_PILLOW = ("13.0.0", "2.14.3", "1.2.13")  # Pillow, its FreeType, zlib used for the fixture PNGs


@pytest.fixture(scope="module")
def rendered64() -> list:  # type: ignore[type-arg]
    if not NOTO_COLOR_EMOJI.is_file():
        pytest.fail("fonts-noto-color-emoji is not installed (Makefile APT_PACKAGES)")
    return render_font_collection(64)


def test_render_gives_21_square_rgba_pngs(rendered64: list) -> None:  # type: ignore[type-arg]
    assert [f.name for f in rendered64] == [name for name, _ in EMOTIONS]
    for f in rendered64:
        img = Image.open(io.BytesIO(f.data))
        assert (img.format, img.mode, img.size) == ("PNG", "RGBA", (64, 64))
        assert img.getbbox() is not None
    assert collection_report(rendered64) == ([], [])


def test_render_matches_fixture_pngs(rendered64: list, assets_fx: Path) -> None:  # type: ignore[type-arg]
    """Oracle: the fixture PNGs in ../shared/fixtures (rendered from the same Debian Noto Color Emoji font).

    Noto Color Emoji glyphs are embedded PNG bitmaps (CBDT) that FreeType only decodes, so the decoded RGBA
    pixels are compared on every version; the PNG bytes (zlib's deflate output) also when Pillow, its
    FreeType and zlib are the fixture's versions. Nothing is skipped."""
    import PIL

    ref = assets_fx / "noto-fonts" / "png" / "noto-color-emoji_64"
    for f in rendered64:
        want = Image.open(ref / f.file)
        got = Image.open(io.BytesIO(f.data))
        assert (got.mode, got.size) == (want.mode, want.size), f.file
        assert got.tobytes() == want.tobytes(), f"{f.file}: pixels differ from the fixture"
    versions = (PIL.__version__, features.version("freetype2"), features.version("zlib"))
    if versions == FIXTURE_PILLOW:
        for f in rendered64:
            assert f.data == (ref / f.file).read_bytes(), f.file


def test_render_is_deterministic() -> None:
    assert [f.data for f in render_font_collection(32)] == [f.data for f in render_font_collection(32)]


def test_bad_sizes_rejected() -> None:
    for size in (0, 48, 256):
        with pytest.raises(UserError, match="32, 64, 128"):
            check_size(size)


def _png(path: Path, size: tuple[int, int], mode: str = "RGBA") -> None:
    Image.new(mode, size, (255, 0, 0, 255) if mode == "RGBA" else 255).save(path, format="PNG")


def test_dir_loading_flattens_sorted_and_resizes(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    _png(tmp_path / "sad.png", (64, 64))
    _png(tmp_path / "sub" / "happy.png", (128, 128))
    (tmp_path / "notes.txt").write_text("ignored")
    files = load_emoji_dir(tmp_path)
    assert [f.file for f in files] == ["sad.png", "happy.png"]
    resized = resize_collection(files, 64)
    assert resized[0].data == files[0].data  # already the right size: bytes untouched
    assert image_size(resized[1].data) == (64, 64)
    missing, extra = collection_report(files)
    assert "neutral" in missing and extra == []


def test_gif_resize_keeps_frames(tmp_path: Path) -> None:
    frames = [Image.new("RGB", (32, 32), c) for c in ((255, 0, 0), (0, 255, 0))]
    frames[0].save(tmp_path / "happy.gif", save_all=True, append_images=frames[1:], duration=80, loop=0)
    [f] = resize_collection(load_emoji_dir(tmp_path), 64)
    img = Image.open(io.BytesIO(f.data))
    assert img.size == (64, 64) and img.n_frames == 2


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        ("happy.png", b"GIF89a" + b"\0" * 20, "content is GIF"),
        ("happy.png", b"\xff\xd8\xff\xe0 jpeg", "not a PNG or GIF"),
        ("happy.png", b"\x89PNG\r\n\x1a\n broken", "corrupt PNG"),
        ("微笑.png", None, "printable ASCII"),
        ("a_very_long_emotion_name_here.png", None, "the limit is 31"),
    ],
)
def test_dir_validation_errors(tmp_path: Path, name: str, content: bytes | None, needle: str) -> None:
    path = tmp_path / name
    if content is None:
        _png(path, (32, 32))
    else:
        path.write_bytes(content)
    with pytest.raises(UserError, match=needle):
        load_emoji_dir(tmp_path)


def test_duplicate_names_across_subdirs(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        _png(tmp_path / sub / "sad.png", (32, 32))
    with pytest.raises(UserError, match="unique"):
        load_emoji_dir(tmp_path)


def test_empty_dir(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no .png or .gif"):
        load_emoji_dir(tmp_path)


def test_walk_order_matches_a_sorted_os_walk(tmp_path: Path) -> None:
    import os

    from assets_gen.names import walk_files

    for rel in ("b.png", "a/z.png", "a/b/c.png", "c.png", "a/a.png", "ab.png"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        _png(tmp_path / rel, (8, 8))
    expected = []
    for root, dirs, files in os.walk(tmp_path):
        dirs.sort()
        expected += [Path(root) / f for f in sorted(files)]
    assert walk_files(tmp_path) == expected
    assert [f.file for f in load_emoji_dir(tmp_path / "a")] == ["a.png", "z.png", "c.png"]


def test_non_square_images_are_fitted_not_stretched(tmp_path: Path) -> None:
    Image.new("RGBA", (100, 50), (255, 0, 0, 255)).save(tmp_path / "cool.png")
    [f] = resize_collection(load_emoji_dir(tmp_path), 32)
    img = Image.open(io.BytesIO(f.data))
    assert img.size == (32, 32)
    assert img.getbbox() == (0, 8, 32, 24)  # 32x16 of content, centred, transparent above and below
