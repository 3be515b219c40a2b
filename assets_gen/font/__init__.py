"""cbin fonts: a writer byte-identical to the reference converter and a validating reader.

Public API (see docs/fonts.md)::

    from assets_gen.font import FontOptions, convert_font_file, convert_font, read_cbin

    result = convert_font_file("DejaVuSans.ttf", FontOptions(size=16, bpp=4), ranges=["0x20-0x7E"])
    result.data          # cbin bytes
    font = read_cbin(result.data)
    font.glyph(ord("A")).alpha()   # 8-bit coverage, box_w * box_h
"""

from assets_gen.font.cbin_reader import (
    CbinFont,
    CbinFormatError,
    CbinGlyph,
    CmapSubtable,
    KernTable,
    read_cbin,
)
from assets_gen.font.charset import CodeGroup, charset_file_group, parse_ranges, symbols_group
from assets_gen.font.convert import (
    VALID_BPP,
    ConvertResult,
    FontOptions,
    collect_groups,
    convert_font,
    convert_font_file,
)
from assets_gen.font.ftlib import freetype_version

__all__ = [
    "VALID_BPP",
    "CbinFont",
    "CbinFormatError",
    "CbinGlyph",
    "CmapSubtable",
    "CodeGroup",
    "ConvertResult",
    "FontOptions",
    "KernTable",
    "charset_file_group",
    "collect_groups",
    "convert_font",
    "convert_font_file",
    "freetype_version",
    "parse_ranges",
    "read_cbin",
    "symbols_group",
]
