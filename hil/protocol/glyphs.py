"""Glyph push (an optional ``glyph_push`` object on ``stt`` and ``tts sentence_start``): build and check it.

The checks mirror ``TextGlyphPayload::Parse`` in the firmware; any violation makes the device reject the
whole payload (it still shows the text). The capability is what the device announced in its hello
(``features.glyph_push`` and ``text_font``); a server must never infer it from the board.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from hil.protocol.messages import ProtocolError

MAX_GLYPHS = 64
MAX_BOX = 64
MAX_BITMAP_BYTES = 64 * 1024
INT16 = (-32768, 32767)


@dataclass(frozen=True)
class Glyph:
    """One glyph: metrics in the cbin/LVGL convention (``adv_w`` in 1/16 px) and its packed bitmap."""

    codepoint: int
    adv_w: int
    box_w: int
    box_h: int
    ofs_x: int
    ofs_y: int
    bitmap: bytes


def bitmap_size(box_w: int, box_h: int, bpp: int) -> int:
    """Bytes of a packed glyph bitmap: ceil(box_w·box_h·bpp / 8)."""
    return (box_w * box_h * bpp + 7) // 8


def glyph_payload(capability: dict[str, Any], glyphs: list[Glyph]) -> dict[str, Any]:
    """A ``glyph_push`` object for a device whose hello announced ``capability`` (its ``text_font``)."""
    return {
        "v": 1, "bundle": capability["bundle"], "size": capability["size"], "bpp": capability["bpp"],
        "glyphs": [{"codepoint": g.codepoint, "adv_w": g.adv_w, "box_w": g.box_w, "box_h": g.box_h,
                    "ofs_x": g.ofs_x, "ofs_y": g.ofs_y, "bitmap": base64.b64encode(g.bitmap).decode()}
                   for g in glyphs],
    }


def sample_glyph(codepoint: int, bpp: int, size: int = 8) -> Glyph:
    """A small filled-square glyph (valid for any bpp); enough to exercise the device's glyph path."""
    side = max(1, min(MAX_BOX, size // 2))
    return Glyph(codepoint, adv_w=16 * (side + 1), box_w=side, box_h=side, ofs_x=0, ofs_y=0,
                 bitmap=b"\xff" * bitmap_size(side, side, bpp))


def _num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def validate_glyph_payload(payload: Any, capability: dict[str, Any] | None) -> None:
    """Raise ``ProtocolError`` (with the firmware's log text) where the device would reject ``payload``.

    ``capability`` is the hello's ``text_font`` when ``features.glyph_push`` was true, else None.
    """
    if (capability is None or not isinstance(payload, dict) or not _num(payload.get("v")) or int(payload["v"]) != 1
            or payload.get("bundle") != capability.get("bundle") or not isinstance(payload.get("bundle"), str)
            or not _num(payload.get("size")) or payload["size"] != capability.get("size")
            or not _num(payload.get("bpp")) or payload["bpp"] != capability.get("bpp")
            or not isinstance(payload.get("glyphs"), list) or len(payload["glyphs"]) > MAX_GLYPHS):
        raise ProtocolError("Rejected incompatible glyph payload")
    bpp = int(payload["bpp"])
    total = 0
    for item in payload["glyphs"]:
        g = item if isinstance(item, dict) else {}
        if not (_num(g.get("codepoint")) and 0 < g["codepoint"] <= 0x10FFFF
                and _num(g.get("adv_w")) and 0 <= g["adv_w"] <= 0xFFFFFFFF
                and _num(g.get("box_w")) and 0 <= int(g["box_w"]) <= MAX_BOX
                and _num(g.get("box_h")) and 0 <= int(g["box_h"]) <= MAX_BOX
                and _num(g.get("ofs_x")) and INT16[0] <= int(g["ofs_x"]) <= INT16[1]
                and _num(g.get("ofs_y")) and INT16[0] <= int(g["ofs_y"]) <= INT16[1]
                and isinstance(g.get("bitmap"), str)):
            raise ProtocolError("Rejected malformed glyph")
        expected = bitmap_size(int(g["box_w"]), int(g["box_h"]), bpp)
        total += expected
        if total > MAX_BITMAP_BYTES:
            raise ProtocolError("Rejected oversized glyph payload")
        text = g["bitmap"]
        if len(text) > (expected + 2) // 3 * 4 + 4:
            raise ProtocolError("Rejected oversized base64 bitmap")
        if expected == 0:
            if text:
                raise ProtocolError("Rejected invalid bitmap (non-empty for an empty box)")
            continue
        try:
            decoded = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        if len(decoded) != expected:
            raise ProtocolError(f"Rejected invalid bitmap for U+{int(g['codepoint']):04X}")


def usable_capability(glyph_push: bool | None, text_font: dict[str, Any] | None) -> dict[str, Any] | None:
    """The hello's ``text_font`` if the device announced glyph push with a font we can build glyphs for."""
    if not glyph_push or not isinstance(text_font, dict) or not isinstance(text_font.get("bundle"), str):
        return None
    if not all(isinstance(text_font.get(k), int) for k in ("size", "bpp")) or text_font["bpp"] not in (1, 2, 4, 8):
        return None
    return text_font


def payload_for_text(capability: dict[str, Any], text: str, *, valid: bool = True) -> dict[str, Any]:
    """Sample glyphs for the non-ASCII characters of ``text`` (U+4E2D if none); ``valid=False`` gives a payload
    the device must reject (wrong ``v``) so its rejection path is exercised."""
    points = list(dict.fromkeys(ord(c) for c in text if ord(c) > 0x7E))[:MAX_GLYPHS] or [0x4E2D]
    payload = glyph_payload(capability, [sample_glyph(cp, capability["bpp"], capability["size"]) for cp in points])
    if valid:
        validate_glyph_payload(payload, capability)
    else:
        payload["v"] = 2
    return payload
