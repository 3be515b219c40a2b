"""Which text font a variant's bundle carries: our converted font (common tier, or the named font's basic tier
when common does not fit), or upstream's own xiaozhi-fonts cbin with its ``text_font_meta``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from assets_gen.bundle_plans import Overrides, VariantPlan
from assets_gen.textfont import FontProfile
from xzbuild.core.errors import UserError


def basic_fallback(plan: VariantPlan, ov: Overrides) -> VariantPlan | None:
    """The same plan with the named font's basic tier, when the font is ours (not --font) and was common."""
    font = plan.font
    if font is None or ov.font is not None or (font.charset == "basic" and not font.bundle_id):
        return None
    return dataclasses.replace(plan, font=FontProfile(font.size, font.bpp, font.autohint_off, charset="basic"))


def apply_fonts_component(plans: list[VariantPlan], fonts: Path | None, ov: Overrides) -> None:
    """With xiaozhi-fonts at hand, pack upstream's own font: ``cbin/font_noto_sans_common_<s>_<b>.bin`` and its
    ``text_font_meta`` (bundle id from the component's manifest.json), exactly as build_default_assets.py."""
    if fonts is None or ov.font is not None:
        return
    try:
        bundle_id = json.loads((fonts / "manifest.json").read_text(encoding="utf-8")).get("bundle_id")
    except (OSError, ValueError) as exc:
        raise UserError(f"{fonts / 'manifest.json'}: cannot read the fonts manifest ({exc})") from None
    if not isinstance(bundle_id, str) or not bundle_id:
        raise UserError(f"{fonts / 'manifest.json'}: no bundle_id; upstream refuses to pack its fonts without one")
    for plan in plans:
        f = plan.font
        if f is None or f.prebuilt:
            continue
        cbin = fonts / "cbin" / f"font_noto_sans_common_{f.size}_{f.bpp}.bin"
        if cbin.is_file():
            plan.font = FontProfile(f.size, f.bpp, f.autohint_off, cbin, 0, "common", bundle_id)
        else:
            plan.notes.append(f"{cbin.name} not in the fonts component; converted our own font")
