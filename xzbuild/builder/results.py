"""Build results: a status enum plus a reason per variant, JSON-lines records that merge across shards, JUnit XML,
and the release manifest `matrix merge` assembles from disjoint shards."""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from xzbuild.core.errors import Location, UserError


class BuildStatus(enum.StrEnum):
    """What happened to one variant in one run."""

    BUILT = "built"  # idf.py ran and the artifacts were stored
    CACHED = "cached"  # a successful artifact with the same cache key already existed
    FAILED = "failed"  # idf.py (or a release check) failed; reason quotes the first error
    SKIPPED = "skipped"  # not attempted (an earlier failure without --keep-going, or interrupted)
    DISABLED = "disabled"  # the variant is not built at this IDF version

    @property
    def ok(self) -> bool:
        """Built or cached: the artifacts exist."""
        return self in (BuildStatus.BUILT, BuildStatus.CACHED)


# Statuses in merge priority: when two shards report the same variant, the more final one wins.
_RANK = {BuildStatus.BUILT: 4, BuildStatus.CACHED: 3, BuildStatus.FAILED: 2, BuildStatus.SKIPPED: 1,
         BuildStatus.DISABLED: 0}


@dataclass
class BuildRecord:
    """One JSON line per variant (keys are stable; readers ignore unknown ones)."""

    full_name: str
    board: str
    name: str
    target: str
    idf: str
    status: BuildStatus
    reason: str | None = None
    key: str | None = None
    seconds: float = 0.0
    log: str | None = None
    app_size: int | None = None
    app_partition_size: int | None = None
    error: str | None = None  # the first compiler/linker error line, when the build failed
    shard: str | None = None
    artifacts: dict[str, str] = field(default_factory=dict)
    drift: list[str] = field(default_factory=list)  # generated files that differed, built with --allow-drift

    def to_json(self) -> str:
        """One line, keys sorted (deterministic)."""
        data = asdict(self)
        data["status"] = str(self.status)
        data["seconds"] = round(self.seconds, 3)
        return json.dumps(data, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str, where: Location) -> BuildRecord:
        """Parse one line (depth-bounded, NaN refused, every known field type-checked); unknown keys are
        ignored so newer writers stay readable."""
        from xzbuild.core.jsonread import parse_json_text

        data = parse_json_text(line, where, "expected a `matrix build` results.jsonl record")
        return cls.from_dict(data, where)

    @classmethod
    def from_dict(cls, data: Any, where: Location) -> BuildRecord:
        """A record from parsed JSON, each field checked for its type (``file:line: field: expected …``)."""
        from xzbuild.core.jsonread import expect

        expect(data, dict, "a build record", where)
        out: dict[str, Any] = {}
        for name, kinds in _FIELD_TYPES.items():
            if name not in data:
                if name in _REQUIRED:
                    raise UserError(f"not a build record: `{name}` is missing", where)
                continue
            out[name] = expect(data[name], kinds, name, where)
        try:
            out["status"] = BuildStatus(out["status"])
        except ValueError:
            raise UserError(f"status: {out['status'][:40]!r} is not one of "
                            f"{', '.join(str(s) for s in BuildStatus)}", where) from None
        seconds = float(out.get("seconds", 0.0))
        if not 0 <= seconds <= MAX_SECONDS:
            raise UserError(f"seconds: {seconds:g} is outside 0..{MAX_SECONDS} (one build lasts less than a year)",
                            where)
        out["seconds"] = seconds
        for key, value in (out.get("artifacts") or {}).items():
            expect(value, str, f"artifacts.{key[:40]}", where)
        for value in out.get("drift") or []:
            expect(value, str, "drift[]", where)
        return cls(**out)


MAX_SECONDS = 366 * 24 * 3600
_OPT_STR = (str, type(None))
_OPT_INT = (int, type(None))
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "full_name": str, "board": str, "name": str, "target": str, "idf": str, "status": str, "reason": _OPT_STR,
    "key": _OPT_STR, "seconds": float, "log": _OPT_STR, "app_size": _OPT_INT, "app_partition_size": _OPT_INT,
    "error": _OPT_STR, "shard": _OPT_STR, "artifacts": dict, "drift": list}
_REQUIRED = ("full_name", "board", "name", "target", "idf", "status")


def write_records(path: Path, records: Iterable[BuildRecord]) -> None:
    """Write JSON lines sorted by full_name, atomically."""
    from xzbuild.core.fsutil import atomic_write_text

    atomic_write_text(path, "".join(r.to_json() + "\n" for r in sorted(records, key=lambda r: r.full_name)))


def read_records(path: Path) -> list[BuildRecord]:
    """Read a JSON-lines file written by ``write_records`` (or appended to during a run)."""
    return [record for _where, record in read_records_at(path)]


def read_records_at(path: Path) -> list[tuple[Location, BuildRecord]]:
    """(``file:line``, record) for each record of a results.jsonl file, through the bounded reader."""
    from xzbuild.core.jsonread import read_jsonl

    return [(where, BuildRecord.from_dict(data, where))
            for where, data in read_jsonl(path, "expected a `matrix build` results.jsonl record")]


def merge_records(groups: Iterable[Iterable[BuildRecord]]) -> list[BuildRecord]:
    """Combine records of several shards/runs: per variant the most final status wins, then the later file."""
    merged: dict[str, BuildRecord] = {}
    for group in groups:
        for record in group:
            old = merged.get(record.full_name)
            if old is None or _RANK[record.status] >= _RANK[old.status]:
                merged[record.full_name] = record
    return [merged[k] for k in sorted(merged)]


# ANSI escape sequences a compiler prints in colour (CSI ... final byte; OSC ... BEL/ST; two-byte ESC x).
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# Characters XML 1.0 does not allow anywhere (production [2] Char), lone surrogates included.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with colour codes removed and every character XML cannot carry shown as ``\\xNN``/``\\uNNNN``,
    so whatever bytes a build printed, the JUnit file stays well-formed."""
    def show(m: re.Match[str]) -> str:
        code = ord(m.group())
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by the surrogateescape error handler
            return f"\\x{code - 0xDC00:02x}"
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _NOT_XML.sub(show, _ANSI.sub("", text))


def _text(value: str) -> str:
    return escape(xml_safe(value))


def _attr(value: str) -> str:
    return quoteattr(xml_safe(value))


def junit_xml(records: list[BuildRecord], suite: str = "xzbuild.matrix.build") -> str:
    """JUnit XML: one testcase per variant; failed → <failure>, skipped/disabled → <skipped>.

    Valid against Jenkins' ``junit-10.xsd`` (what GitLab and Jenkins read): ``<properties>`` may only sit under
    ``<testsuite>``, so a passing case says built/cached in its ``<system-out>`` instead.
    """
    failures = sum(r.status is BuildStatus.FAILED for r in records)
    skipped = sum(r.status in (BuildStatus.SKIPPED, BuildStatus.DISABLED) for r in records)
    total = sum(r.seconds for r in records)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f"<testsuites><testsuite name={_attr(suite)} tests=\"{len(records)}\" failures=\"{failures}\" "
             f"errors=\"0\" skipped=\"{skipped}\" time=\"{total:.3f}\">"]
    for r in sorted(records, key=lambda r: r.full_name):
        head = (f"<testcase classname={_attr(f'{r.target}.{r.board}')} name={_attr(r.full_name)} "
                f"time=\"{r.seconds:.3f}\"")
        if r.status is BuildStatus.FAILED:
            body = _text(r.error or r.reason or "")
            lines.append(f"{head}><failure message={_attr(r.reason or 'failed')}>{body}</failure>"
                         f"<system-out>{_text(r.log or '')}</system-out></testcase>")
        elif r.status in (BuildStatus.SKIPPED, BuildStatus.DISABLED):
            lines.append(f"{head}><skipped message={_attr(r.reason or str(r.status))}/></testcase>")
        else:
            out = f"status: {r.status}" + (f"\nlog: {r.log}" if r.log else "")
            lines.append(f"{head}><system-out>{_text(out)}</system-out></testcase>")
    lines.append("</testsuite></testsuites>")
    return "\n".join(lines) + "\n"


def summary_counts(records: Iterable[BuildRecord]) -> dict[str, int]:
    """Count per status, every status present (for the summary line and bench output)."""
    counts = {str(s): 0 for s in BuildStatus}
    for r in records:
        counts[str(r.status)] += 1
    return counts


@dataclass(frozen=True)
class MergeOutcome:
    """`matrix merge`'s answer: the manifest written, how many variants it lists and which of them failed."""

    output: Path
    count: int
    failed: list[str]


def merge_shards(results: list[Path], matrix_file: Path | None, output: Path) -> MergeOutcome:
    """`matrix merge`: one sorted manifest from shard results, written to ``output``; every expected variant exactly
    once. Failed builds are listed in the outcome (the CLI exits 1 for them).

    The files are read with this module's reader (``read_records_at``), the one `matrix results merge` uses, so
    both commands accept and reject the same lines.
    """
    from xzbuild.core.fsutil import atomic_write_text
    from xzbuild.core.jsonread import expect, read_json

    merged: dict[str, BuildRecord] = {}
    seen_at: dict[str, str] = {}
    for path in results:
        for where, record in read_records_at(path):
            name = record.full_name
            if name in merged:
                raise UserError(f"{name} is reported twice (also in {seen_at[name]}); shards must not overlap", where)
            merged[name] = record
            seen_at[name] = str(where)
    if matrix_file is not None:
        matrix = read_json(matrix_file, "expected the JSON that `matrix github` prints")
        where = Location(str(matrix_file), 1, 1)
        if not isinstance(matrix, dict) or not isinstance(matrix.get("include"), list):
            raise UserError("expected the JSON that `matrix github` prints ({\"include\": [...]})", where)
        expected = set()
        for number, job in enumerate(matrix["include"]):
            expect(job, dict, f"include[{number}]", where)
            expected |= set(expect(job.get("variants", ""), str, f"include[{number}].variants", where).split())
        missing = sorted(expected - set(merged))
        if missing:
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            raise UserError(f"no build result for {', '.join(missing[:10])}{more}; a shard failed or was not "
                            "downloaded", Location(str(matrix_file)))
    failed = sorted(n for n, r in merged.items() if r.status is BuildStatus.FAILED)
    manifest = {"schema_version": 1, "count": len(merged), "failed": failed,
                "variants": [json.loads(merged[n].to_json()) for n in sorted(merged)]}
    atomic_write_text(output, json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return MergeOutcome(output, len(merged), failed)
