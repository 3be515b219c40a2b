"""cbin images for skin backgrounds (spec §9): an LVGL 9.3+ ``lv_image_dsc_t`` (28 bytes) plus RGB565 pixels.

The firmware casts the asset bytes to the descriptor and rebases ``data``; nothing is validated on the
device, so the writer checks its own output with :func:`read_cbin_image`.
"""

from __future__ import annotations

import struct
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from xzbuild.core.errors import Location, UserError

if TYPE_CHECKING:
    from PIL.Image import Image

MAGIC = 0x19
CF_RGB565 = 0x12
# Formats LVGL accepts structurally, with their bytes per pixel (RGB565A8 stores an extra alpha plane).
KNOWN_FORMATS = {0x12: ("RGB565", 2), 0x14: ("RGB565A8", 3), 0x10: ("ARGB8888", 4), 0x0F: ("RGB888", 3)}
DESC = struct.Struct("<BBHHHHHIIII")
HEADER_LEN = DESC.size  # 28
MAX_SIDE = 2048


def rgb565(r: int, g: int, b: int) -> int:
    """Pack 8-bit channels into RGB565 by truncation, as LVGL's converters do."""
    return ((r >> 3) << 11) | ((g >> 2) << 5) | (b >> 3)


def cover(img: Image, width: int, height: int) -> Image:
    """Scale to fill ``width``×``height`` keeping the aspect ratio, then centre-crop (CSS ``cover``)."""
    from PIL import Image as PILImage

    scale = max(width / img.width, height / img.height)
    w, h = max(width, round(img.width * scale)), max(height, round(img.height * scale))
    scaled = img.resize((w, h), PILImage.Resampling.LANCZOS)
    left, top = (w - width) // 2, (h - height) // 2
    return scaled.crop((left, top, left + width, top + height))


def encode_cbin_image(img: Image, width: int, height: int, matte: str = "#000000") -> bytes:
    """Encode ``img`` as an RGB565 cbin image of exactly ``width``×``height``; alpha is flattened onto ``matte``."""
    from PIL import Image as PILImage

    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise UserError(f"background size {width}x{height}: expected 1..{MAX_SIDE} pixels per side")
    rgba = cover(img.convert("RGBA"), width, height)
    base = PILImage.new("RGBA", rgba.size, _hex_rgb(matte) + (255,))
    rgb = PILImage.alpha_composite(base, rgba).convert("RGB")
    pixels = _to_rgb565(rgb)
    size = len(pixels)
    out = DESC.pack(MAGIC, CF_RGB565, 0, width, height, width * 2, 0, size, HEADER_LEN, 0, 0) + bytes(pixels)
    problems = read_cbin_image(out).errors
    if problems:  # our own output must always parse; anything else is a bug worth stopping on
        raise AssertionError(f"cbin image self-check failed: {problems}")
    return out


MAX_PIXELS = 4096 * 4096  # the largest display xzbuild knows is 4096 wide or high (xzbuild/parts/ranges.py)
MAX_FRAMES = 1000  # GIF frames: over a minute of animation at 15 frames/s


def image_bounds_problem(img: Image) -> str | None:
    """Why an opened (not yet decoded) image is too large to decode: its header's pixel count, or for an
    animation its frame count (counted by seeking frame headers, stopping past the bound)."""
    w, h = img.size
    if w * h > MAX_PIXELS:
        return (f"image is {w}×{h} = {w * h:,} pixels; the bound is {MAX_PIXELS:,} (4096×4096): scale it down "
                "to the display size")
    if getattr(img, "is_animated", False):
        for frame in range(1, MAX_FRAMES + 1):
            try:
                img.seek(frame)
            except EOFError:
                break
        else:
            return f"animation has more than {MAX_FRAMES} frames (the bound for one image); shorten it"
        img.seek(0)
    return None


def load_background(path: Path, width: int, height: int, matte: str = "#000000") -> bytes:
    """Read a PNG/JPEG from disk and return it as a cbin background for a ``width``×``height`` display."""
    from PIL import Image as PILImage

    where = Location(str(path))
    if not path.is_file():
        raise UserError("background image not found", where)
    try:
        with warnings.catch_warnings():  # our bound below is the message, not Pillow's bomb warning
            warnings.simplefilter("ignore", PILImage.DecompressionBombWarning)
            opened = PILImage.open(path)
        with opened as img:
            if img.format not in ("PNG", "JPEG"):
                raise UserError(f"background is {img.format}, expected PNG or JPEG", where)
            problem = image_bounds_problem(img)  # before decoding: a 13000² PNG would take 2 GB
            if problem:
                raise UserError(problem, where)
            img.load()
            return encode_cbin_image(img, width, height, matte)
    except UserError:
        raise
    except Exception as exc:  # Pillow raises many exception types for corrupt images
        raise UserError(f"cannot read the background image ({exc}); give a PNG or JPEG file", where) from None


@dataclass
class CbinImage:
    """A parsed cbin image header with structural problems collected."""

    width: int = 0
    height: int = 0
    color_format: int = 0
    stride: int = 0
    data_size: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def format_name(self) -> str:
        """LVGL colour format name."""
        return KNOWN_FORMATS.get(self.color_format, (f"0x{self.color_format:02X}", 0))[0]


def read_cbin_image(data: bytes) -> CbinImage:
    """Parse and bounds-check a cbin image the way LVGL will use it."""
    img = CbinImage()
    if len(data) < HEADER_LEN:
        img.errors.append(f"{len(data)} bytes, shorter than the 28-byte image descriptor")
        return img
    magic, cf, _flags, w, h, stride, _r, size, offset, _r1, _r2 = DESC.unpack_from(data, 0)
    img.width, img.height, img.color_format, img.stride, img.data_size = w, h, cf, stride, size
    if magic != MAGIC:
        img.errors.append(f"magic 0x{magic:02X}, expected 0x19 (LVGL image header)")
    if cf not in KNOWN_FORMATS:
        img.errors.append(f"unknown colour format 0x{cf:02X}")
        return img
    bpp = KNOWN_FORMATS[cf][1]
    if w == 0 or h == 0:
        img.errors.append("zero width or height")
    if cf != 0x14 and stride < w * bpp:
        img.errors.append(f"stride {stride} is less than width {w} × {bpp} bytes")
    if size < h * stride:
        img.errors.append(f"data size {size} is less than height × stride = {h * stride}")
    if offset != HEADER_LEN:
        img.errors.append(f"data offset {offset}, expected 28")
    if HEADER_LEN + size > len(data):
        img.errors.append(f"pixel data needs {HEADER_LEN + size} bytes, the asset has {len(data)}")
    return img


def decode_cbin_image(data: bytes) -> Image:
    """Turn an RGB565 cbin image back into a Pillow image (for previews)."""
    from PIL import Image as PILImage
    from PIL import ImageChops

    info = read_cbin_image(data)
    if info.errors or info.color_format != CF_RGB565:
        raise UserError(f"cannot decode background: {'; '.join(info.errors) or info.format_name + ' not supported'}")
    rows = b"".join(
        data[HEADER_LEN + y * info.stride : HEADER_LEN + y * info.stride + 2 * info.width] for y in range(info.height)
    )
    low, high = PILImage.frombytes("LA", (info.width, info.height), rows).split()
    # Expand 5/6-bit channels back to 8 bits by repeating the top bits, like LVGL's colour conversion.
    r = high.point(lambda v: (v & 0xF8) | (v >> 5))
    g6 = ImageChops.add(high.point(lambda v: (v & 0x07) << 5), low.point(lambda v: (v >> 3) & 0x1C))
    g = g6.point(lambda v: v | (v >> 6))
    b = low.point(lambda v: ((v & 0x1F) << 3) | ((v & 0x1F) >> 2))
    return PILImage.merge("RGB", (r, g, b))


def _to_rgb565(rgb: Image) -> bytes:
    """RGB565 little-endian pixels via per-channel lookup tables (the bit fields of each byte are disjoint)."""
    from PIL import Image as PILImage
    from PIL import ImageChops

    r, g, b = rgb.split()
    high = ImageChops.add(r.point(lambda v: v & 0xF8), g.point(lambda v: v >> 5))
    low = ImageChops.add(g.point(lambda v: (v << 3) & 0xE0), b.point(lambda v: v >> 3))
    return PILImage.merge("LA", (low, high)).tobytes()


def _hex_rgb(color: str) -> tuple[int, int, int]:
    v = int(color.lstrip("#"), 16)
    return (v >> 16) & 0xFF, (v >> 8) & 0xFF, v & 0xFF
