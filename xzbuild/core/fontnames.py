"""Upstream's 2026 rename of its built-in fonts (same size and bit depth, new names): one table for the importer
(which carries an older tree's names onto today's), generate (which keeps a tree's own spelling while it names the
same font) and the executing drift gate (which compares fonts by what they name)."""

from __future__ import annotations

import re

#: (board-file key, old name pattern, today's name): font_puhui_<n>_<bpp> (the full charset) and
#: font_noto_basic_* were folded into the one basic font; font_awesome_* became font_material_symbols_*.
FONT_RENAMES = (
    ("text_font", re.compile(r"^font_(?:puhui|noto)(?:_basic)?_(\d+)_(\d+)$"), "font_noto_sans_basic_{}_{}"),
    ("icon_font", re.compile(r"^font_awesome_(\d+)_(\d+)$"), "font_material_symbols_{}_{}"),
)


def font_meaning(name: str) -> str:
    """A font name as today's model spells it (the rename above); other names unchanged."""
    for _, rx, new in FONT_RENAMES:
        m = rx.match(name)
        if m:
            return new.format(*m.groups())
    return name
