"""``assets inspect``: validate a bundle the way the firmware reads it, and describe every member.

Container checks mirror ``Assets::LvglStrategy`` (main/assets.cc); the index checks mirror ``Apply``; the
members are then checked deeper than the device does (cbin fonts and images get no checks on the device
and crash it when malformed): srmodels tables, cbin font structure, image headers, emoji formats.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from assets_gen.container import Container, read_container
from assets_gen.emoji import EMOTION_NAMES, image_kind, image_size
from assets_gen.image import read_cbin_image
from assets_gen.index import BUNDLE_ID, CHARSETS, COLOR, ci_get
from assets_gen.srmodels import read_srmodels
from xzbuild.core.jsonread import JsonProblem
from xzbuild.core.jsonread import loads as bounded_loads


@dataclass
class MemberInfo:
    """One row of the inspect table."""

    name: str
    size: int
    offset: int
    kind: str = "unreferenced"
    detail: str = ""


@dataclass
class Report:
    """Everything ``inspect`` found; ``ok`` means the firmware would load every referenced member."""

    size: int
    file_count: int = 0
    checksum: int = 0
    partition_size: int | None = None
    members: list[MemberInfo] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    index: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """No errors."""
        return not self.errors

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready dict (stable key order)."""
        out = asdict(self)
        out["ok"] = self.ok
        return out


def inspect_bundle(data: bytes, partition_size: int | None = None, display: tuple[int, int] | None = None) -> Report:
    """Check ``assets.bin`` bytes; problems land in ``errors``/``warnings``, nothing is raised.

    ``partition_size`` and ``display`` (width, height) add the checks that need the target variant."""
    c = read_container(data, partition_size)
    report = Report(len(data), c.file_count, c.stored_checksum, partition_size, errors=list(c.errors),
                    warnings=list(c.warnings))
    rows = {e.name: MemberInfo(e.name, e.size, e.offset) for e in c.entries}
    report.members = list(rows.values())
    if c.errors and not c.entries:
        return report
    raw_index = c.member("index.json")
    if raw_index is None:
        report.errors.append("index.json is missing or unreadable; the firmware applies nothing")
        return report
    rows["index.json"].kind = "index"
    try:
        index = bounded_loads(raw_index.decode("utf-8"), object_pairs_hook=_first_key_wins)
    except UnicodeDecodeError as exc:
        report.errors.append(f"index.json is not valid JSON ({exc})")
        return report
    except JsonProblem as exc:
        report.errors.append(f"index.json line {exc.line}: {exc.message}")
        return report
    if not isinstance(index, dict):
        report.errors.append("index.json is not a JSON object")
        return report
    report.index = index
    version = ci_get(index, "version")
    if isinstance(version, int | float) and version > 1:
        report.errors.append(f"index.json version {version}: the firmware rejects versions above 1")
    _check_srmodels(c, index, rows, report)
    _check_font(c, index, rows, report)
    _check_emoji(c, index, rows, report)
    _check_skin(c, index, rows, report, display)
    _check_multinet(index, report)
    extra = ci_get(index, "extra_files")
    for name in extra if isinstance(extra, list) else []:
        if isinstance(name, str) and name in rows:
            rows[name].kind = "extra"
    return report


def _first_key_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """cJSON returns the first of duplicate keys; Python's default keeps the last."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        out.setdefault(k, v)
    return out


def _referenced(c: Container, index: dict[str, Any], key: str, report: Report) -> tuple[str, bytes] | None:
    """The member an index key names, or None (absent key; a dangling name is an error)."""
    name = ci_get(index, key)
    if name is None:
        return None
    data = c.member(name) if isinstance(name, str) else None
    if data is None:
        report.errors.append(f"index.json {key} {name!r}: no such valid member")
        return None
    return name, data


def _check_srmodels(c: Container, index: dict[str, Any], rows: dict[str, MemberInfo], report: Report) -> None:
    ref = _referenced(c, index, "srmodels", report)
    if ref is None:
        return
    name, data = ref
    pack = read_srmodels(data)
    report.errors += [f"{name}: {e}" for e in pack.errors]
    report.warnings += [f"{name}: {w}" for w in pack.warnings]
    rows[name].kind = "srmodels"
    rows[name].detail = ", ".join(f"{m.name} ({sum(n for _, _, n in m.files):,} B)" for m in pack.models)


def _check_font(c: Container, index: dict[str, Any], rows: dict[str, MemberInfo], report: Report) -> None:
    from assets_gen.fontcheck import describe_cbin_font

    ref = _referenced(c, index, "text_font", report)
    if ref is None:
        return
    name, data = ref
    rows[name].kind = "text_font"
    info, problems = describe_cbin_font(data)
    report.errors += [f"{name}: {p}" for p in problems]
    if info is None:
        return
    rows[name].detail = info.summary
    meta = ci_get(index, "text_font_meta")
    if meta is None:
        return
    why = _meta_problem(meta, info.bpp)
    if why:
        report.warnings.append(f"text_font_meta ignored by the firmware (glyph push off): {why}")
    else:
        rows[name].detail += f"; glyph push {ci_get(meta, 'charset')}/{ci_get(meta, 'bundle')}"


def _meta_problem(meta: Any, bpp: int) -> str:
    charset, size, mbpp, bundle = (ci_get(meta, k) for k in ("charset", "size", "bpp", "bundle"))
    if charset not in CHARSETS:
        return f"charset {charset!r} is not basic/common"
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        return f"size {size!r} is not a positive integer"
    if mbpp not in (1, 4) or mbpp != bpp:
        return f"bpp {mbpp!r} must be 1 or 4 and equal the font's bpp {bpp}"
    if not isinstance(bundle, str) or not BUNDLE_ID.fullmatch(bundle):
        return f"bundle {bundle!r} is not a valid bundle id"
    return ""


def _check_emoji(c: Container, index: dict[str, Any], rows: dict[str, MemberInfo], report: Report) -> None:
    coll = ci_get(index, "emoji_collection")
    if coll is None:
        return
    if not isinstance(coll, list):
        report.warnings.append("emoji_collection is not an array; the firmware ignores it")
        return
    names = set()
    for i, item in enumerate(coll):
        name, file = ci_get(item, "name"), ci_get(item, "file")
        if ci_get(item, "eaf") is not None:
            continue  # emote boards only; LVGL boards skip these entries
        if not isinstance(name, str) or not isinstance(file, str):
            report.warnings.append(f"emoji_collection[{i}] lacks string name/file; skipped by the firmware")
            continue
        data = c.member(file)
        if data is None:
            report.warnings.append(f"emoji {name!r}: file {file!r} is missing; the firmware skips it")
            continue
        kind = image_kind(data)
        if kind is None:
            report.errors.append(f"emoji {name!r}: {file} is neither PNG nor GIF; LVGL cannot decode it")
            continue
        names.add(name)
        w, h = image_size(data) or (0, 0)
        rows[file].kind = "emoji"
        rows[file].detail = f"{name}: {kind.upper()} {w}x{h}"
    missing = sorted(EMOTION_NAMES - names)
    if missing and names:
        report.warnings.append(f"emoji collection lacks {len(missing)} standard emotions (built-ins used): "
                               + ", ".join(missing))


def _check_skin(c: Container, index: dict[str, Any], rows: dict[str, MemberInfo], report: Report,
                display: tuple[int, int] | None) -> None:
    skin = ci_get(index, "skin")
    if not isinstance(skin, dict):
        return
    for which in ("light", "dark"):
        theme = ci_get(skin, which)
        if not isinstance(theme, dict):
            continue
        for key in ("text_color", "background_color"):
            value = ci_get(theme, key)
            if isinstance(value, str) and not COLOR.fullmatch(value):
                report.warnings.append(f"skin.{which}.{key} {value!r} is not #RRGGBB; the firmware may show black")
        image = ci_get(theme, "background_image")
        if not isinstance(image, str):
            continue
        data = c.member(image)
        if data is None:
            report.errors.append(f"skin.{which}.background_image {image!r} is missing; Apply() stops there")
            continue
        info = read_cbin_image(data)
        report.errors += [f"{image}: {e}" for e in info.errors]
        rows[image].kind = "background"
        rows[image].detail = f"{which}: {info.format_name} {info.width}x{info.height}"
        if display and not info.errors and (info.width, info.height) != display:
            report.warnings.append(f"{image}: {info.width}x{info.height} does not match the {display[0]}x{display[1]} "
                                   "display; LVGL draws it unscaled")


def _check_multinet(index: dict[str, Any], report: Report) -> None:
    mn = ci_get(index, "multinet_model")
    if mn is None:
        return
    commands = ci_get(mn, "commands")
    if ci_get(mn, "language") not in ("cn", "en") or not isinstance(commands, list) or not commands:
        report.errors.append("multinet_model needs language cn/en and a non-empty commands list")
        return
    for i, cmd in enumerate(commands):
        if not all(isinstance(ci_get(cmd, k), str) for k in ("command", "text", "action")):
            report.errors.append(f"multinet_model.commands[{i}] needs string command, text and action")
