"""Contact sheet of an expression bundle: the first frame of each distinct expression animation, decoded
from the bundle's own EAF bytes, labelled with every emotion name that uses it; icons below."""

from __future__ import annotations

import io
from typing import Any

from assets_gen.expression.verify import ExpressionReport


def render_expression_preview(report: ExpressionReport, source: str) -> bytes:
    """PNG bytes of the sheet."""
    from PIL import Image, ImageDraw, ImageFont

    from assets_gen.expression.eaf import first_frame
    from assets_gen.image import decode_cbin_image

    bundle, index = report.bundle, report.index or {}
    label = ImageFont.load_default(size=14)
    by_file: dict[str, list[str]] = {}
    for item in index.get("emoji_collection") or []:
        if isinstance(item, dict) and isinstance(item.get("file"), str):
            by_file.setdefault(item["file"], []).append(str(item.get("name")))
    cells: list[tuple[str, Any]] = []
    for file, names in by_file.items():
        entry = bundle.find(file)
        try:
            img = first_frame(bundle.member(entry)) if entry else None
        except Exception:  # noqa: BLE001 - an undecodable animation is shown as a labelled gap
            img = None
        cells.append((f"{file}: {', '.join(names)}" if img else f"{file}: {', '.join(names)} (not decodable)", img))
    for item in index.get("icon_collection") or []:
        entry = bundle.find(str(item.get("file"))) if isinstance(item, dict) else None
        if entry is None:
            continue
        data = bundle.member(entry)
        try:
            img = first_frame(data) if data[:1] == b"\x89" else decode_cbin_image(data)
        except Exception:  # noqa: BLE001
            img = None
        cells.append((f"icon {item.get('name')}", img))
    cell_w = max([img.width for _, img in cells if img] + [160]) + 16
    cell_h = max([img.height for _, img in cells if img] + [60]) + 40
    cols = max(1, 1000 // cell_w)
    rows = (len(cells) + cols - 1) // cols
    sheet = Image.new("RGB", (cols * cell_w + 20, rows * cell_h + 60), (250, 250, 247))
    draw = ImageDraw.Draw(sheet)
    status = "OK" if report.ok else f"FAIL {len(report.errors)} error(s)"
    draw.text((10, 10), f"{source}: expression bundle, {len(bundle.entries)} members, "
                        f"{bundle.name_length}-byte names, {status}", fill=(20, 20, 20), font=label)
    for i, (text, img) in enumerate(cells):
        x, y = 10 + (i % cols) * cell_w, 40 + (i // cols) * cell_h
        draw.rectangle((x, y, x + cell_w - 8, y + cell_h - 30), fill=(30, 30, 30))
        if img is not None:
            rgba = img.convert("RGBA")
            sheet.paste(rgba, (x + 4, y + 4), rgba)
        draw.text((x, y + cell_h - 26), text[: cell_w // 7], fill=(20, 20, 20), font=label)
    buf = io.BytesIO()
    sheet.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def format_expression_report(report: ExpressionReport, source: str) -> str:
    """Plain-text inspect output for an expression bundle."""
    b = report.bundle
    lines = [f"{source}: expression bundle (esp_mmap_assets {'2.0 MMAP' if b.version == 2 else '1.x'} layout), "
             f"{len(b.data):,} B, {len(b.entries)} members, {b.name_length}-byte names, checksum 0x{b.checksum:04X}"]
    width = max([len(e.name) for e in b.entries] + [4])
    lines.append(f"  {'name':<{width}}  {'size':>10} {'offset':>10}  w x h")
    lines += [f"  {e.name:<{width}}  {e.size:>10,} {e.offset:>10,}  {e.width}x{e.height}" for e in b.entries]
    idx = report.index or {}
    lines.append(f"  index: {len(idx.get('emoji_collection') or [])} emotions, "
                 f"{len(idx.get('icon_collection') or [])} icons, layout {'yes' if idx.get('layout') else 'no'}, "
                 f"text_font {idx.get('text_font')}")
    lines += [f"error: {e}" for e in report.errors] + [f"warning: {w}" for w in report.warnings]
    lines.append("OK: esp_emote_expression would load this bundle" if report.ok else f"FAIL: {len(report.errors)} error(s)")
    return "\n".join(lines)
