"""``assets preview``: a contact sheet rendered from a bundle's bytes alone.

Text is drawn glyph by glyph from the bundle's cbin font (decoded back to bitmaps), so a broken font
shows up as broken text; emoji are decoded from the stored PNG/GIF bytes; backgrounds from the cbin
images. Labels use Pillow's built-in font so the sheet stays readable even when the bundle has no font.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from assets_gen.container import read_container
from assets_gen.index import ci_get
from xzbuild.core.errors import Location, UserError

if TYPE_CHECKING:
    from PIL.Image import Image

    from assets_gen.font.cbin_reader import CbinFont as GlyphFont

SAMPLE = (
    "你好，小智！今天天气怎么样？我们一起听音乐吧。",
    "The quick brown fox jumps over the lazy dog. 0123456789",
    "欢迎使用小智语音助手：请说“你好小智”唤醒我。",
    "Ünïcödé Latin-1: café, naïve, façade, 100 °C, ±5 %",
)
WIDTH = 1000
MARGIN = 20
INK = (20, 20, 20)
PAPER = (250, 250, 247)
MISSING = (220, 60, 60)


def render_preview(data: bytes, sample: str | None = None, source: str = "<bundle>") -> bytes:
    """PNG bytes of the contact sheet for ``data`` (an ``assets.bin``)."""
    from PIL import Image as PILImage
    from PIL import ImageFont

    from assets_gen.fontcheck import font_summary
    from assets_gen.inspect import inspect_bundle

    report = inspect_bundle(data)
    if report.index is None:
        raise UserError(f"cannot preview: {'; '.join(report.errors) or 'no index.json'}", Location(source))
    c = read_container(data)
    index = report.index
    label_font = ImageFont.load_default(size=15)
    blocks: list[Image] = [_title(f"{source}: {len(data):,} B, {c.file_count} members, "
                                  f"{'OK' if report.ok else 'FAIL ' + str(len(report.errors)) + ' error(s)'}", label_font)]
    font_name = ci_get(index, "text_font")
    font = _font(c.member(font_name)) if isinstance(font_name, str) else None
    if font is not None:
        lines = sample.splitlines() if sample else list(SAMPLE)
        blocks.append(_title(f"text font {ci_get(index, 'text_font')}: {font_summary(font)}", label_font))
        blocks += [_text_line(font, line, scale) for line in lines for scale in (1, 2)]
    emoji = _emoji(c, index)
    if emoji:
        sizes = sorted({f"{img.width}x{img.height}" for _, img in emoji})
        blocks.append(_title(f"emoji collection: {len(emoji)} images, {', '.join(sizes)} px", label_font))
        blocks.append(_emoji_grid(emoji, label_font))
    backgrounds = _backgrounds(c, index)
    if backgrounds:
        blocks.append(_title("skin backgrounds", label_font))
        blocks.append(_row(backgrounds, label_font))
    models = _models(c, index)
    if models:
        blocks.append(_title("wake-word models", label_font))
        blocks += [_text_line(font, m, 1) if font else _title(m, label_font) for m in models]
    height = sum(b.height + 8 for b in blocks) + 2 * MARGIN
    sheet = PILImage.new("RGB", (WIDTH, height), PAPER)
    y = MARGIN
    for b in blocks:
        sheet.paste(b, (MARGIN, y), b if b.mode == "RGBA" else None)
        y += b.height + 8
    buf = io.BytesIO()
    sheet.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def _font(data: bytes | None) -> GlyphFont | None:
    from assets_gen.fontcheck import load_glyph_font

    return None if data is None else load_glyph_font(data)


def _title(text: str, font: Any) -> Image:
    from PIL import Image as PILImage
    from PIL import ImageDraw

    img = PILImage.new("RGBA", (WIDTH - 2 * MARGIN, 22), (0, 0, 0, 0))
    ImageDraw.Draw(img).text((0, 3), text, fill=(70, 70, 140), font=font)
    return img


def _text_line(font: GlyphFont, text: str, scale: int) -> Image:
    """Draw ``text`` with the cbin glyphs: pen advances by adv_w/16, bitmaps sit on the baseline."""
    from PIL import Image as PILImage

    height = max(font.line_height, 1)
    line = PILImage.new("RGBA", (WIDTH - 2 * MARGIN, height), (0, 0, 0, 0))
    baseline = font.line_height - font.base_line
    pen = 0.0
    for ch in text:
        g = font.glyphs.get(ord(ch))
        if g is None:
            box = PILImage.new("RGBA", (max(font.line_height // 2, 2), font.line_height // 2), MISSING + (255,))
            line.paste(box, (int(pen), baseline - box.height))
            pen += box.width + 2
            continue
        if g.box_w and g.box_h:
            alpha = PILImage.frombytes("L", (g.box_w, g.box_h), g.alpha())
            ink = PILImage.new("RGBA", alpha.size, INK + (255,))
            ink.putalpha(alpha)
            line.alpha_composite(ink, (max(int(pen) + g.ofs_x, 0), max(baseline - g.ofs_y - g.box_h, 0)))
        pen += g.adv_w / 16
    if scale > 1:
        line = line.resize((line.width * scale, line.height * scale), PILImage.Resampling.NEAREST)
        line = line.crop((0, 0, WIDTH - 2 * MARGIN, line.height))
    return line


def _emoji(c: Any, index: dict[str, Any]) -> list[tuple[str, Image]]:
    from PIL import Image as PILImage

    out = []
    coll = ci_get(index, "emoji_collection")
    for item in coll if isinstance(coll, list) else []:
        name, file = ci_get(item, "name"), ci_get(item, "file")
        data = c.member(file) if isinstance(file, str) else None
        if data is None:
            continue
        try:
            img = PILImage.open(io.BytesIO(data))
            img.seek(0)
            out.append((str(name), img.convert("RGBA")))
        except Exception:  # undecodable emoji are reported by inspect; the sheet shows the rest
            continue
    return out


def _emoji_grid(emoji: list[tuple[str, Image]], label_font: Any) -> Image:
    from PIL import Image as PILImage
    from PIL import ImageDraw

    cell = max(max(img.width for _, img in emoji), 92) + 12
    cols = max((WIDTH - 2 * MARGIN) // (cell + 8), 1)
    rows = (len(emoji) + cols - 1) // cols
    grid = PILImage.new("RGBA", (WIDTH - 2 * MARGIN, rows * (cell + 22)), (0, 0, 0, 0))
    draw = ImageDraw.Draw(grid)
    for i, (name, img) in enumerate(emoji):
        x, y = (i % cols) * (cell + 8), (i // cols) * (cell + 22)
        draw.rectangle((x, y, x + cell - 1, y + cell - 1), fill=(236, 236, 230))
        grid.alpha_composite(img, (x + (cell - img.width) // 2, y + (cell - img.height) // 2))
        draw.text((x + 2, y + cell + 3), name, fill=INK, font=label_font)
    return grid


def _backgrounds(c: Any, index: dict[str, Any]) -> list[tuple[str, Image]]:
    from assets_gen.image import decode_cbin_image

    out = []
    skin = ci_get(index, "skin") or {}
    for which in ("light", "dark"):
        theme = ci_get(skin, which) or {}
        name = ci_get(theme, "background_image")
        data = c.member(name) if isinstance(name, str) else None
        if data is None:
            continue
        try:
            img = decode_cbin_image(data)
        except UserError:
            continue
        img.thumbnail((300, 300))
        out.append((f"{which}: {name}\ntext {ci_get(theme, 'text_color')} on {ci_get(theme, 'background_color')}",
                    img.convert("RGBA")))
    return out


def _row(items: list[tuple[str, Image]], label_font: Any) -> Image:
    from PIL import Image as PILImage
    from PIL import ImageDraw

    height = max(img.height for _, img in items) + 42
    row = PILImage.new("RGBA", (WIDTH - 2 * MARGIN, height), (0, 0, 0, 0))
    x = 0
    for label, img in items:
        row.alpha_composite(img, (x, 0))
        ImageDraw.Draw(row).multiline_text((x, img.height + 4), label, fill=INK, font=label_font, spacing=3)
        x += max(img.width, 280) + 30
    return row


def _models(c: Any, index: dict[str, Any]) -> list[str]:
    from assets_gen.srmodels import read_srmodels

    name = ci_get(index, "srmodels")
    data = c.member(name) if isinstance(name, str) else None
    if data is None:
        return []
    lines = [f"{m.name}: {m.info}" for m in read_srmodels(data).models]
    commands = ci_get(ci_get(index, "multinet_model"), "commands")
    for cmd in commands if isinstance(commands, list) else []:
        lines.append(f"custom wake word: {ci_get(cmd, 'command')} → {ci_get(cmd, 'text')}")
    return lines
