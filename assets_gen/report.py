"""Plain-text rendering of an inspect :class:`~assets_gen.inspect.Report` (a member table plus findings)."""

from __future__ import annotations

from assets_gen.inspect import Report


def format_report(report: Report, source: str) -> str:
    """Header line, one row per member (kind, size, offset, detail), then errors and warnings."""
    part = f", partition {report.partition_size:,} B" if report.partition_size else ""
    lines = [
        f"{source}: {report.size:,} B, {report.file_count} members, checksum 0x{report.checksum:04X}{part}",
    ]
    if report.members:
        width = max(len(m.name) for m in report.members)
        lines.append(f"  {'name':<{width}}  {'kind':<12} {'size':>10} {'offset':>10}  detail")
        for m in report.members:
            lines.append(f"  {m.name:<{width}}  {m.kind:<12} {m.size:>10,} {m.offset:>10,}  {m.detail}")
    lines += [f"error: {e}" for e in report.errors]
    lines += [f"warning: {w}" for w in report.warnings]
    lines.append("OK: the firmware would load this bundle" if report.ok else f"FAIL: {len(report.errors)} error(s)")
    return "\n".join(lines)
