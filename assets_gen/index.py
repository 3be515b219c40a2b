"""``index.json``: the bundle's table of contents (spec §4), written exactly as upstream's builder writes it.

Upstream format: ``json.dump(obj, indent=4, ensure_ascii=False)``, UTF-8, no trailing newline, keys in the
order version, srmodels, text_font, text_font_meta, emoji_collection, extra_files, multinet_model. ``skin``
(which upstream's builder never writes) follows them. The firmware looks keys up case-insensitively
(cJSON_GetObjectItem), which :func:`ci_get` mirrors.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from xzbuild.core.errors import UserError

BUNDLE_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
COLOR = re.compile(r"#[0-9A-Fa-f]{6}")
CHARSETS = ("basic", "common")


@dataclass(frozen=True)
class FontMeta:
    """``text_font_meta``: claims the font is a genuine glyph-push bundle font (only then may it be set)."""

    charset: str
    size: int
    bpp: int
    bundle: str

    @classmethod
    def parse(cls, spec: str) -> FontMeta:
        """Parse ``CHARSET:SIZE:BPP:BUNDLE`` (e.g. ``common:20:4:noto-v1``)."""
        parts = spec.split(":")
        if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit():
            raise UserError(f"font meta {spec!r}: expected CHARSET:SIZE:BPP:BUNDLE, e.g. common:20:4:noto-v1")
        meta = cls(parts[0], int(parts[1]), int(parts[2]), parts[3])
        meta.validate()
        return meta

    def validate(self) -> None:
        """Apply the firmware's glyph-push rules; a meta that fails them would silently disable glyph push."""
        if self.charset not in CHARSETS:
            raise UserError(f"font meta charset {self.charset!r}: the firmware accepts only {', '.join(CHARSETS)}")
        if not 0 < self.size < 256:
            raise UserError(f"font meta size {self.size}: expected a pixel size between 1 and 255")
        if self.bpp not in (1, 4):
            raise UserError(f"font meta bpp {self.bpp}: the firmware accepts only 1 or 4")
        if not BUNDLE_ID.fullmatch(self.bundle):
            raise UserError(f"font meta bundle {self.bundle!r}: expected [a-z0-9][a-z0-9._-]{{0,63}}, e.g. noto-v1")

    def as_json(self) -> dict[str, Any]:
        """The object as upstream writes it."""
        return {"charset": self.charset, "size": self.size, "bpp": self.bpp, "bundle": self.bundle}


@dataclass(frozen=True)
class Theme:
    """One ``skin`` theme: colours as ``#RRGGBB`` and an optional cbin background member name."""

    text_color: str
    background_color: str
    background_image: str | None = None

    def validate(self, which: str) -> None:
        """Colours must be ``#RRGGBB`` (the firmware turns anything else into black)."""
        for key, value in (("text_color", self.text_color), ("background_color", self.background_color)):
            if not COLOR.fullmatch(value):
                raise UserError(f"skin.{which}.{key} {value!r}: expected #RRGGBB, e.g. #FFFFFF")

    def as_json(self) -> dict[str, Any]:
        """The object the firmware reads."""
        obj: dict[str, Any] = {"text_color": self.text_color.upper(), "background_color": self.background_color.upper()}
        if self.background_image:
            obj["background_image"] = self.background_image
        return obj


@dataclass(frozen=True)
class Multinet:
    """``multinet_model``: a custom wake word recognised by MultiNet."""

    language: str
    threshold: float
    commands: tuple[tuple[str, str], ...]  # (pinyin/English command, display text)
    duration: int = 3000

    def as_json(self) -> dict[str, Any]:
        """The object as upstream writes it (every command is a ``wake`` action)."""
        return {
            "language": self.language,
            "duration": self.duration,
            "threshold": self.threshold,
            "commands": [{"command": c, "text": t, "action": "wake"} for c, t in self.commands],
        }


def make_index(
    *,
    srmodels: str | None = None,
    text_font: str | None = None,
    text_font_meta: FontMeta | None = None,
    emoji: list[tuple[str, str]] | None = None,
    extra_files: list[str] | None = None,
    multinet: Multinet | None = None,
    skin: dict[str, Theme] | None = None,
) -> bytes:
    """Serialise ``index.json`` byte-for-byte like upstream's ``generate_index_json``."""
    obj: dict[str, Any] = {"version": 1}
    if srmodels:
        obj["srmodels"] = srmodels
    if text_font:
        obj["text_font"] = text_font
        if text_font_meta:
            obj["text_font_meta"] = text_font_meta.as_json()
    if emoji:
        obj["emoji_collection"] = [{"name": name, "file": file} for name, file in emoji]
    if extra_files:
        obj["extra_files"] = list(extra_files)
    if multinet:
        obj["multinet_model"] = multinet.as_json()
    if skin:
        obj["skin"] = {which: theme.as_json() for which, theme in skin.items()}
    return json.dumps(obj, indent=4, ensure_ascii=False).encode("utf-8")


def ci_get(obj: Any, key: str) -> Any:
    """cJSON_GetObjectItem: the first member whose key matches case-insensitively, else None."""
    if not isinstance(obj, dict):
        return None
    for k, v in obj.items():
        if k.lower() == key.lower():
            return v
    return None
