"""cbin background images: header layout, RGB565 packing, cover scaling, reader checks."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from PIL import Image

from assets_gen.image import (
    HEADER_LEN,
    decode_cbin_image,
    encode_cbin_image,
    load_background,
    read_cbin_image,
    rgb565,
)
from xzbuild.core.errors import UserError


def test_header_and_pixels() -> None:
    img = Image.new("RGB", (4, 2), (255, 128, 7))
    data = encode_cbin_image(img, 4, 2)
    assert struct.unpack_from("<BBHHHHHIIII", data) == (0x19, 0x12, 0, 4, 2, 8, 0, 16, 28, 0, 0)
    assert len(data) == HEADER_LEN + 16
    assert struct.unpack_from("<H", data, 28)[0] == rgb565(255, 128, 7) == 0xFC00 | (128 >> 2) << 5 | 0


def test_roundtrip_is_stable() -> None:
    img = Image.radial_gradient("L").convert("RGB").resize((50, 30))
    data = encode_cbin_image(img, 50, 30)
    assert encode_cbin_image(decode_cbin_image(data), 50, 30) == data


def test_cover_crops_to_display_aspect(tmp_path: Path) -> None:
    src = Image.new("RGB", (400, 100), (0, 0, 255))
    src.paste((255, 0, 0), (0, 0, 150, 100))  # red left edge gets cropped away by "cover"
    src.save(tmp_path / "wide.png")
    out = decode_cbin_image(load_background(tmp_path / "wide.png", 100, 100))
    assert out.size == (100, 100)
    assert out.getpixel((50, 50)) == (0, 0, 255)


def test_alpha_is_flattened_on_matte() -> None:
    img = Image.new("RGBA", (2, 2), (0, 0, 0, 0))
    px = decode_cbin_image(encode_cbin_image(img, 2, 2, matte="#FFFFFF")).getpixel((0, 0))
    assert px == (255, 255, 255)


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d[:20], "shorter than"),
        (lambda d: b"\x18" + d[1:], "magic"),
        (lambda d: d[:-2], "pixel data needs"),
        (lambda d: d[:1] + b"\x77" + d[2:], "unknown colour format"),
    ],
)
def test_reader_errors(mutate, needle: str) -> None:  # type: ignore[no-untyped-def]
    data = encode_cbin_image(Image.new("RGB", (3, 3)), 3, 3)
    assert any(needle in e for e in read_cbin_image(mutate(data)).errors)


def test_bad_background_files(tmp_path: Path) -> None:
    (tmp_path / "x.png").write_bytes(b"not an image")
    with pytest.raises(UserError, match="PNG or JPEG"):
        load_background(tmp_path / "x.png", 10, 10)
    Image.new("RGB", (4, 4)).save(tmp_path / "x.bmp")
    with pytest.raises(UserError, match="expected PNG or JPEG"):
        load_background(tmp_path / "x.bmp", 10, 10)
    with pytest.raises(UserError, match="not found"):
        load_background(tmp_path / "missing.png", 10, 10)
