"""Check an expression bundle the way the device reads it: esp_mmap_assets (1.x layout, the firmware's
CONFIG_MMAP_FILE_NAME_LENGTH) and esp_emote_expression (``index.json`` and the files it names)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assets_gen.mmap import MmapBundle, read_mmap
from xzbuild.core.jsonread import loads as bounded_loads

EAF_MAGIC = b"\x89EAF"  # esp_emote_gfx animation files (as in the real bundle's .eaf members)


@dataclass
class ExpressionReport:
    """What ``inspect`` found in an expression bundle."""

    bundle: MmapBundle
    index: dict[str, Any] | None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No errors."""
        return not self.errors


def verify_expression(data: bytes, name_length: int, partition_size: int | None = None) -> ExpressionReport:
    """Read ``data`` back and check container, index and every referenced member."""
    bundle = read_mmap(data, name_length)
    report = ExpressionReport(bundle, None, list(bundle.errors))
    if partition_size is not None and len(data) > partition_size:
        report.errors.append(f"bundle is {len(data):,} B but the assets partition holds {partition_size:,} B")
    cut = [e.name for e in bundle.entries if not e.terminated]
    if cut:
        report.warnings.append(f"names fill the {bundle.name_length}-byte field (cut by the packer): {', '.join(cut)}")
    entry = bundle.find("index.json")
    if entry is None:
        report.errors.append("no index.json member")
        return report
    try:
        index = bounded_loads(bundle.member(entry).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:  # JsonProblem is a ValueError
        report.errors.append(f"index.json is not JSON: {exc}")
        return report
    if not isinstance(index, dict):
        report.errors.append("index.json is not an object")
        return report
    report.index = index
    if not isinstance(index.get("version"), int) or index["version"] > 1:
        report.errors.append(f"index.json version {index.get('version')!r}: expected 1")
    font = index.get("text_font")
    if font is not None and bundle.find(str(font)) is None:
        report.errors.append(f"text_font {font!r} is not a member")
    for key in ("emoji_collection", "icon_collection"):
        for item in index.get(key) or []:
            if not isinstance(item, dict) or not isinstance(item.get("file"), str):
                report.errors.append(f"{key}: entry {item!r} has no file")
                continue
            lack = isinstance(item.get("eaf"), dict) and item["eaf"].get("lack")
            e = bundle.find(item["file"])
            if e is None:
                (report.warnings if lack else report.errors).append(
                    f"{key}: {item.get('name')!r} names {item['file']!r}, which is not a member"
                    + (" (marked lack)" if lack else ""))
            elif item["file"].endswith(".eaf") and bundle.member(e)[:4] != EAF_MAGIC:
                report.errors.append(f"{key}: {item['file']!r} does not start with the EAF magic")
    return report


EMOTE_KEYS = ("icon_collection", "layout")


def detect_expression(data: bytes, name_length: int | None = None) -> ExpressionReport | None:
    """An expression bundle's report, or None when ``data`` is not one (then it is an ``assets.bin``).

    The 2.0 layout says so by its magic; the 1.x layout is recognised by its index (icons, layout or
    ``eaf`` emotions), trying the given name length or else 32 and the packer's default 16."""
    from xzbuild.core.errors import UserError

    if data[:4] == b"MMAP":
        return verify_expression(data, name_length or 32)
    for n in [name_length] if name_length else [32, 16]:
        try:
            report = verify_expression(data, n)
        except UserError:
            continue
        idx = report.index or {}
        emotes = idx.get("emoji_collection") or []
        if any(k in idx for k in EMOTE_KEYS) or any(isinstance(e, dict) and "eaf" in e for e in emotes):
            return report
    return None
