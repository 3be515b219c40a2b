"""Emoji collections (spec §10): the 21 emotion images, rendered from a colour emoji font or taken from a dir.

Files are stored as raw PNG/GIF bytes; the firmware looks each emotion up by the file stem. Rendering from
Debian's Noto Color Emoji (a CBDT bitmap font with one 109 ppem strike) follows the recipe the reference
fixture was made with, so with the same Pillow/FreeType/zlib the PNGs are byte-identical to it.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assets_gen.image import image_bounds_problem
from assets_gen.names import check_name, walk_files
from xzbuild.core.errors import Location, UserError

if TYPE_CHECKING:
    from PIL.Image import Image

EMOTIONS: tuple[tuple[str, int], ...] = (
    ("neutral", 0x1F636), ("happy", 0x1F642), ("laughing", 0x1F606), ("funny", 0x1F602),
    ("sad", 0x1F614), ("angry", 0x1F620), ("crying", 0x1F62D), ("loving", 0x1F60D),
    ("embarrassed", 0x1F633), ("surprised", 0x1F62F), ("shocked", 0x1F631), ("thinking", 0x1F914),
    ("winking", 0x1F609), ("cool", 0x1F60E), ("relaxed", 0x1F60C), ("delicious", 0x1F924),
    ("kissy", 0x1F618), ("confident", 0x1F60F), ("sleepy", 0x1F634), ("silly", 0x1F61C),
    ("confused", 0x1F644),
)
EMOTION_NAMES = frozenset(name for name, _ in EMOTIONS)
SIZES = (32, 64, 128)
NOTO_COLOR_EMOJI = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")
# The font's only bitmap strike is 109 ppem; a 136 px canvas holds the glyph with its advance.
_STRIKE_PPEM = 109
_CANVAS = 136
_ORIGIN = (0, 4)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
GIF_MAGICS = (b"GIF87a", b"GIF89a")


@dataclass(frozen=True)
class EmojiFile:
    """One collection member: file name (its stem is the emotion name) and the raw bytes."""

    file: str
    data: bytes

    @property
    def name(self) -> str:
        """The emotion name the firmware looks up."""
        return self.file.rsplit(".", 1)[0]


def check_size(size: int) -> int:
    """Collections come in 32, 64 and 128 px, like upstream's noto-color-emoji_{32,64,128}."""
    if size not in SIZES:
        raise UserError(f"emoji size {size}: expected one of {', '.join(map(str, SIZES))}")
    return size


def render_font_collection(size: int, font_path: Path = NOTO_COLOR_EMOJI) -> list[EmojiFile]:
    """Render the 21 standard emotions as ``size``×``size`` RGBA PNGs from a colour emoji font."""
    from PIL import Image, ImageDraw, ImageFont

    check_size(size)
    if not font_path.is_file():
        raise UserError(
            "colour emoji font not found; install Debian's fonts-noto-color-emoji or pass --emoji-dir",
            Location(str(font_path)),
        )
    try:
        font = ImageFont.truetype(str(font_path), _STRIKE_PPEM)
    except OSError as exc:
        raise UserError(f"cannot load the emoji font ({exc}); it must be a CBDT colour font", Location(str(font_path))) from None
    out = []
    for name, cp in EMOTIONS:
        canvas = Image.new("RGBA", (_CANVAS, _CANVAS), (0, 0, 0, 0))
        ImageDraw.Draw(canvas).text(_ORIGIN, chr(cp), font=font, embedded_color=True)
        if canvas.getbbox() is None:
            raise UserError(f"the font has no colour glyph for {name} (U+{cp:X})", Location(str(font_path)))
        buf = io.BytesIO()
        canvas.resize((size, size), Image.Resampling.LANCZOS).save(buf, format="PNG")
        out.append(EmojiFile(f"{name}.png", buf.getvalue()))
    return out


def image_kind(data: bytes) -> str | None:
    """``png`` / ``gif`` from the magic bytes (the firmware's decoders pick by content), else None."""
    if data.startswith(PNG_MAGIC):
        return "png"
    if data.startswith(GIF_MAGICS):
        return "gif"
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height read from the PNG IHDR or GIF screen descriptor, without decoding."""
    kind = image_kind(data)
    if kind == "png" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if kind == "gif" and len(data) >= 10:
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    return None


def load_emoji_dir(directory: Path) -> list[EmojiFile]:
    """Collect every PNG/GIF under ``directory`` (recursive, sorted, flattened like upstream) and validate it."""
    if not directory.is_dir():
        raise UserError("emoji directory not found", Location(str(directory)))
    files: dict[str, Path] = {}
    for path in walk_files(directory):
        if path.suffix.lower() not in (".png", ".gif"):
            continue
        where = Location(str(path))
        check_name(path.name, "emoji file", where)
        if path.name in files:
            raise UserError(f"emoji file name also used by {files[path.name]}; names must be unique", where)
        files[path.name] = path
    if not files:
        raise UserError("no .png or .gif files in the emoji directory", Location(str(directory)))
    out = []
    for file, path in files.items():
        data = path.read_bytes()
        _check_image(data, path)
        out.append(EmojiFile(file, data))
    return out


def _check_image(data: bytes, path: Path) -> None:
    where = Location(str(path))
    kind = image_kind(data)
    expected = path.suffix.lower().lstrip(".")
    if kind is None:
        raise UserError(f"not a PNG or GIF file (the firmware decodes only those); convert it to {expected}", where)
    if kind != expected:
        raise UserError(f"file content is {kind.upper()} but the name says .{expected}; rename it", where)
    from PIL import Image

    try:
        with warnings.catch_warnings():  # our bound below is the message, not Pillow's bomb warning
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
        with img:
            problem = image_bounds_problem(img)  # from the header, before decoding
            if problem is None:
                img.load()
    except Exception as exc:  # Pillow raises many exception types for corrupt images
        raise UserError(f"corrupt {kind.upper()} image ({exc})", where) from None
    if problem is not None:
        raise UserError(problem, where)


def resize_collection(files: list[EmojiFile], size: int) -> list[EmojiFile]:
    """Bring every image to ``size``×``size``; images already that size keep their exact bytes.

    Non-square images are scaled to fit and centred on a transparent square (never stretched)."""
    check_size(size)
    return [f if image_size(f.data) == (size, size) else EmojiFile(f.file, _resize(f, size)) for f in files]


def _fit(frame: Image, size: int) -> Image:
    from PIL import Image as PILImage

    rgba = frame.convert("RGBA")
    scale = size / max(rgba.width, rgba.height)
    w, h = max(1, round(rgba.width * scale)), max(1, round(rgba.height * scale))
    canvas = PILImage.new("RGBA", (size, size), (0, 0, 0, 0))
    canvas.paste(rgba.resize((w, h), PILImage.Resampling.LANCZOS), ((size - w) // 2, (size - h) // 2))
    return canvas


def _resize(f: EmojiFile, size: int) -> bytes:
    from PIL import Image as PILImage
    from PIL import ImageSequence

    buf = io.BytesIO()
    with PILImage.open(io.BytesIO(f.data)) as img:
        if image_kind(f.data) == "png":
            _fit(img, size).save(buf, format="PNG")
        else:
            frames = [_fit(fr, size) for fr in ImageSequence.Iterator(img)]
            durations = [fr.info.get("duration", 100) for fr in ImageSequence.Iterator(img)]
            frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=durations,
                           loop=img.info.get("loop", 0), disposal=2)
    return buf.getvalue()


def collection_report(files: list[EmojiFile]) -> tuple[list[str], list[str]]:
    """(missing standard emotions, names outside the standard 21) for a collection."""
    names = {f.name for f in files}
    missing = [name for name, _ in EMOTIONS if name not in names]
    extra = sorted(names - EMOTION_NAMES)
    return missing, extra


def collection_warnings(files: list[EmojiFile]) -> list[str]:
    """What the firmware will show oddly: missing standard emotions (it logs "Emoji not found" and falls back
    to a font glyph) and images whose size differs from the collection's usual one (it draws each image at
    its own size, so one 100x37 among 64x64 jumps out of the layout)."""
    from collections import Counter

    out: list[str] = []
    missing, _extra = collection_report(files)
    if missing:
        out.append(f"{len(missing)} of {len(EMOTIONS)} standard emotions missing ({', '.join(missing)}); the firmware "
                   "falls back to a font glyph for them")
    sizes = {f.file: image_size(f.data) for f in files}
    common = Counter(s for s in sizes.values() if s is not None).most_common(1)
    if common:
        usual = common[0][0]
        odd = sorted(f"{name} is {w}x{h}" for name, (w, h) in
                     ((n, s) for n, s in sizes.items() if s is not None and s != usual))
        if odd:
            out.append(f"emoji sizes differ from the usual {usual[0]}x{usual[1]}: {', '.join(odd[:8])}"
                       f"{' ...' if len(odd) > 8 else ''}; resize them (or use `xzbuild assets emoji --from-dir`)")
    return out

