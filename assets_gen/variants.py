"""Per-variant bundles: make shared members once, pack, check against the partition, write.

Each plan (:mod:`assets_gen.bundle_plans`) gets a content key computed *without* making anything (digests of the
inputs plus parameters). A bundle whose key matches the one recorded in ``<out>/<variant>/assets.json``
is left alone; otherwise its members come from the content cache (a font used by 60 variants is made
once; distinct fonts are converted in parallel), the bundle is packed, checked and written.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assets_gen.assemble import assemble
from assets_gen.bundle_plans import Overrides, VariantPlan, plan_variants
from assets_gen.cache import DEFAULT_DIR, Cache, make_key
from assets_gen.fontchoice import apply_fonts_component, basic_fallback
from assets_gen.index import FontMeta
from assets_gen.inputs import InputDirs
from assets_gen.load import DARK, LIGHT, BundleSpec
from assets_gen.textfont import FontProfile, check_source, default_charset
from assets_gen.verify import verify
from assets_gen.wakeword import reserved_size
from xzbuild.core.errors import UserError

BUILDER_VERSION = "3"  # bump when member bytes would change for the same inputs


@dataclass
class VariantResult:
    """The outcome for one variant: ok / cached, skipped (with the reason) or failed (with the reason)."""

    name: str
    status: str  # ok | cached | skipped | failed
    reason: str = ""
    path: str = ""
    size: int = 0
    partition_size: int | None = None
    members: list[tuple[str, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    key: str = ""

    @property
    def ok(self) -> bool:
        """Skipped variants are fine (they have no default assets); failures are not."""
        return self.status != "failed"

    def as_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"variant": self.name, "status": self.status, "reason": self.reason, "path": self.path,
                "size": self.size, "partition_size": self.partition_size,
                "members": [{"name": n, "size": s} for n, s in self.members], "notes": self.notes, "key": self.key}


def build_variants(boards_dir: Path, names: list[str], all_variants: bool, out_dir: Path, ov: Overrides,
                   jobs: int | None = None, cache_dir: Path | None = None,
                   progress: Callable[[str], None] | None = None) -> list[VariantResult]:
    """Plan, make and write the bundles of the selected variants; returns one result per variant."""
    cache = Cache(cache_dir or DEFAULT_DIR)
    plans = plan_variants(boards_dir, names, all_variants, ov, cache)
    maker = MemberMaker(cache, ov, InputDirs(ov))
    apply_fonts_component(plans, maker.inputs.fonts, maker.ov)
    keys = {p.name: maker.key_for(p) for p in plans if not p.skip}
    stale = [p for p in plans if not p.skip and not _unchanged(out_dir, p.name, keys[p.name])]
    maker.prepare_fonts([p.font for p in stale if p.font], jobs, progress)
    results = []
    for plan in plans:
        result = build_one(plan, maker, out_dir, keys.get(plan.name, ""))
        results.append(result)
        if progress:
            progress(f"{result.status:>7} {result.name} {result.reason}".rstrip())
    cache.flush()
    return results


def _record(out_dir: Path, name: str) -> dict[str, Any] | None:
    try:
        data = json.loads((out_dir / name / "assets.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _unchanged(out_dir: Path, name: str, key: str) -> dict[str, Any] | None:
    """The recorded result if ``<out>/<name>/`` holds the outcome for exactly this key: an intact bundle,
    or the same failure (an oversize bundle stays oversize until an input changes)."""
    rec = _record(out_dir, name)
    if not rec or rec.get("key") != key:
        return None
    if rec.get("status") == "failed":
        return rec
    target = out_dir / name / "assets.bin"
    return rec if target.is_file() and target.stat().st_size == rec.get("size") else None


def build_one(plan: VariantPlan, maker: MemberMaker, out_dir: Path, key: str) -> VariantResult:
    """Make (or recognise as unchanged) one variant's bundle and write it with its report."""
    from xzbuild.core.fsutil import atomic_write_text, write_if_changed

    result = VariantResult(plan.name, "ok", partition_size=plan.partition_size, notes=list(plan.notes))
    if plan.skip:
        result.status, result.reason = "skipped", plan.skip
        return result
    if plan.mode in ("custom", "expression"):
        return _build_mode(plan, maker, out_dir, key, result)
    result.notes += maker.notes_for(plan)
    if plan.emoji and plan.emoji[0] == "otto" and maker.inputs.otto_gif is None:
        result.status = "skipped"
        result.reason = ("missing input: the otto-gif emoji collection (txp666/otto-emoji-gif-component gifs/); "
                         "pass --firmware with managed_components/ or --otto-gif DIR")
        return result
    if plan.font is None and plan.emoji is None and not maker.has_skin(plan):
        if not plan.wake.models:
            result.status, result.reason = "skipped", "nothing to pack (no assets font, emoji, wake word or skin)"
            return result
        if len(maker.missing_models(plan)) == len(plan.wake.models):
            result.status = "skipped"
            result.reason = (f"missing input: only a wake word ({', '.join(plan.wake.models)}) to pack and no ESP-SR "
                             "models; pass --firmware with managed_components/ or --esp-sr DIR")
            return result
    target = out_dir / plan.name / "assets.bin"
    result.path, result.key = str(target), key
    previous = _unchanged(out_dir, plan.name, key)
    if previous:
        result.status = "failed" if previous["status"] == "failed" else "cached"
        result.reason, result.size = previous["reason"], int(previous["size"])
        result.members = [(m["name"], m["size"]) for m in previous["members"]]
        return result
    record = target.with_name("assets.json")
    try:
        bundle = assemble(maker.spec_for(plan))
        partition = plan.partition_size
        assert partition is not None
        smaller = basic_fallback(plan, maker.ov) if bundle.planned_size > partition else None
        if smaller is not None:
            result.notes.append(f"text font {plan.font.member_name if plan.font else ''} with the common charset makes "
                                f"the bundle {bundle.planned_size:,} B (> {partition:,} B): packed the font's "
                                f"own basic charset ({len(default_charset('basic')):,} characters) instead")
            plan, bundle = smaller, assemble(maker.spec_for(smaller))
        result.size, result.members = bundle.size, list(bundle.members)
        report = verify(bundle, partition, plan.display)
        if not report.ok:
            raise UserError(f"bundle fails inspect: {'; '.join(report.errors)}")
    except UserError as exc:
        result.status, result.reason = "failed", str(exc)
        target.unlink(missing_ok=True)  # never leave an older, now wrong bundle next to a failure
        atomic_write_text(record, json.dumps(result.as_json(), indent=2, ensure_ascii=False) + "\n")
        return result
    write_if_changed(target, bundle.data)
    atomic_write_text(record, json.dumps(result.as_json(), indent=2, ensure_ascii=False) + "\n")
    return result


def _build_mode(plan: VariantPlan, maker: MemberMaker, out_dir: Path, key: str, result: VariantResult) -> VariantResult:
    """Custom and expression bundles: made by :mod:`assets_gen.variant_modes`, written like the others."""
    from assets_gen.variant_modes import MissingInput, make_custom, make_expression
    from xzbuild.core.fsutil import atomic_write_text, write_if_changed

    target = out_dir / plan.name / "assets.bin"
    previous = _unchanged(out_dir, plan.name, key)
    if previous and previous["status"] != "skipped":
        result.status = "failed" if previous["status"] == "failed" else "cached"
        result.reason, result.size, result.path, result.key = previous["reason"], int(previous["size"]), str(target), key
        result.members = [(m["name"], m["size"]) for m in previous["members"]]
        result.notes = list(previous["notes"])
        return result
    try:
        made = (make_custom if plan.mode == "custom" else make_expression)(plan, maker.inputs)
    except MissingInput as exc:
        result.status, result.reason = "skipped", f"missing input: {exc}"
        return result
    except UserError as exc:
        result.status, result.reason, result.key = "failed", str(exc), key
        target.unlink(missing_ok=True)
        atomic_write_text(target.with_name("assets.json"), json.dumps(result.as_json(), indent=2, ensure_ascii=False) + "\n")
        return result
    result.path, result.key, result.size, result.members = str(target), key, len(made.data), made.members
    result.notes += made.notes
    write_if_changed(target, made.data)
    atomic_write_text(target.with_name("assets.json"), json.dumps(result.as_json(), indent=2, ensure_ascii=False) + "\n")
    return result


def format_results(results: list[VariantResult]) -> str:
    """One line per variant (with notes) plus a summary line."""
    lines = []
    for r in results:
        size = f"{r.size:>10,} / {r.partition_size:>10,} B" if r.partition_size and r.size else " " * 27
        lines.append(f"{r.status:<8} {r.name:<48} {size}  {r.reason}".rstrip())
        lines += [f"         note: {n}" for n in r.notes]
    counts = {s: sum(1 for r in results if r.status == s) for s in ("ok", "cached", "skipped", "failed")}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no variants")
    return "\n".join(lines)


class MemberMaker:
    """Keys and makes members; everything expensive goes through the content cache."""

    def __init__(self, cache: Cache, ov: Overrides, inputs: InputDirs | None = None) -> None:
        self.cache = cache
        self.ov = ov
        self.inputs = inputs or InputDirs(ov)
        self._font_keys: dict[FontProfile, str] = {}

    def has_skin(self, plan: VariantPlan) -> bool:
        """Backgrounds apply when given and the variant has a pixel display."""
        return plan.display is not None and bool(self.ov.background or self.ov.background_dark)

    # -- keys (cheap: digests are remembered across runs) ------------------------------------------
    def font_key(self, profile: FontProfile) -> str:
        """Content key of a converted font: source bytes, profile, charset, FreeType version."""
        from assets_gen.charsets import CHARSET_FILES
        from assets_gen.textfont import converter_id

        if profile in self._font_keys:
            return self._font_keys[profile]
        check_source(profile)
        self._font_keys[profile] = make_key("font", source=self.cache.digest(profile.source), face=profile.face_index,
                        size=profile.size, bpp=profile.bpp, autohint_off=profile.autohint_off,
                        charset=self.cache.digest(CHARSET_FILES[profile.charset]), converter=converter_id(), builder=BUILDER_VERSION)
        return self._font_keys[profile]

    def _emoji_key(self, source: str, size: int) -> str:
        from assets_gen.emoji import NOTO_COLOR_EMOJI

        if source in ("dir", "otto"):
            root = self.ov.emoji_dir if source == "dir" else self.inputs.otto_gif
            if root is None:
                return make_key("emoji-missing", source=source)
            files = sorted(p for p in root.rglob("*") if p.is_file())
            return make_key(f"emoji-{source}", size=size, files=[(str(p), self.cache.digest(p)) for p in files],
                            tools=_pillow_id(), builder=BUILDER_VERSION)
        return make_key("emoji", font=self.cache.digest(NOTO_COLOR_EMOJI), size=size, tools=_pillow_id())

    def _models_key(self, plan: VariantPlan) -> Any:
        if not plan.wake.models:
            return None
        esp_sr = self.inputs.esp_sr
        if esp_sr is None:
            return ["reserved", list(plan.wake.models)]
        out = []
        for sub, names in (("wakenet_model", plan.wake.wakenet), ("multinet_model", plan.wake.multinet)):
            for name in names:
                d = esp_sr / sub / name
                files = sorted(p for p in d.iterdir() if p.is_file()) if d.is_dir() else []
                out.append([name, [(p.name, self.cache.digest(p)) for p in files]])
        return [out, plan.wake.custom.as_json() if plan.wake.custom else None]

    def _skin_key(self, plan: VariantPlan) -> Any:
        if not self.has_skin(plan):
            return None
        light, dark = self._background_sources()
        return [self.cache.digest(light), self.cache.digest(dark), plan.display, _pillow_id()]

    def key_for(self, plan: VariantPlan) -> str:
        """The bundle's content key, computed without making any member."""
        from assets_gen import variant_modes

        if plan.mode == "custom":
            return variant_modes.custom_key(plan, self.inputs, self.cache)
        if plan.mode == "expression":
            return variant_modes.expression_key(plan, self.inputs, self.cache)
        return make_key("bundle", builder=BUILDER_VERSION,
                        font=[self.font_key(plan.font), plan.font.member_name, plan.font.bundle_id] if plan.font else None,
                        emoji=self._emoji_key(*plan.emoji) if plan.emoji else None,
                        wake=self._models_key(plan), skin=self._skin_key(plan))

    # -- members ------------------------------------------------------------------------------------
    def prepare_fonts(self, profiles: list[FontProfile], jobs: int | None,
                      progress: Callable[[str], None] | None) -> None:
        """Convert every distinct font not yet cached, in parallel processes when there are several."""
        from assets_gen.textfont import convert_profile

        todo = {self.font_key(p): p for p in dict.fromkeys(profiles)}
        todo = {k: p for k, p in todo.items() if self.cache.get("font", k) is None}
        if not todo:
            return
        if progress:
            progress(f"converting {len(todo)} text font(s): " + ", ".join(f"{p.size}/{p.bpp}" for p in todo.values()))
        if len(todo) == 1 or jobs == 1:
            for key, p in todo.items():
                self.cache.put("font", key, convert_profile(p))
            return
        # Biggest fonts first so the pool's last task is a short one.
        order = sorted(todo, key=lambda k: -todo[k].size)
        with ProcessPoolExecutor(max_workers=min(jobs or os.cpu_count() or 2, len(order))) as pool:
            for key, data in zip(order, pool.map(convert_profile, [todo[k] for k in order]), strict=True):
                self.cache.put("font", key, data)

    def spec_for(self, plan: VariantPlan) -> BundleSpec:
        """The bundle spec of a plan (the load step of variant mode), members made or taken from the cache."""
        from assets_gen.textfont import convert_profile

        spec = BundleSpec()
        if plan.font:
            profile = plan.font
            data = self.cache.get_or_make("font", self.font_key(profile), lambda: convert_profile(profile))
            spec.font = (profile.member_name, data)
            if profile.bundle_id:  # upstream's rule: a *_common_<size>_<bpp> bundle font gets its meta
                spec.font_meta = FontMeta("common", profile.size, profile.bpp, profile.bundle_id)
        if plan.emoji:
            spec.emoji = self._emoji(*plan.emoji)
        self._models(plan, spec)
        if self.has_skin(plan):
            self._backgrounds(plan, spec)
        return spec

    def missing_models(self, plan: VariantPlan) -> list[str]:
        """The plan's ESP-SR models whose directories are not available (all of them without an ESP-SR tree)."""
        esp_sr = self.inputs.esp_sr
        if esp_sr is None:
            return list(plan.wake.models)
        subs = [("wakenet_model", n) for n in plan.wake.wakenet] + [("multinet_model", n) for n in plan.wake.multinet]
        return [n for sub, n in subs if not (esp_sr / sub / n).is_dir()]

    def notes_for(self, plan: VariantPlan) -> list[str]:
        """Human notes about reserved (unavailable) wake-word models."""
        missing = self.missing_models(plan)
        if not missing:
            return []
        where = (f"not in {self.inputs.esp_sr}" if self.inputs.esp_sr else
                 "pass --firmware with managed_components/ or --esp-sr <esp-sr>/model to pack them")
        return [f"wake word {', '.join(missing)}: room reserved, model files not packed ({where})"]

    def _emoji(self, source: str, size: int) -> list[Any]:
        from assets_gen import emoji

        if source == "otto":  # upstream packs the component's GIFs unchanged
            otto_dir = self.inputs.otto_gif
            assert otto_dir is not None

            def make() -> bytes:
                return _pack_files(emoji.load_emoji_dir(otto_dir))
        elif source == "dir":
            assert self.ov.emoji_dir is not None
            emoji_dir = self.ov.emoji_dir

            def make() -> bytes:
                return _pack_files(emoji.resize_collection(emoji.load_emoji_dir(emoji_dir), size))
        else:

            def make() -> bytes:
                return _pack_files(emoji.render_font_collection(size))

        blob = self.cache.get_or_make("emoji", self._emoji_key(source, size), make)
        return [emoji.EmojiFile(n, d) for n, d in _unpack_files(blob)]

    def _models(self, plan: VariantPlan, spec: BundleSpec) -> None:
        from assets_gen.wakeword import load_models

        if not plan.wake.models:
            return
        spec.multinet = plan.wake.custom
        missing = self.missing_models(plan)
        spec.reserved = {name: reserved_size(name) for name in missing}
        if self.inputs.esp_sr is not None and len(missing) < len(plan.wake.models):
            present = dataclasses.replace(plan.wake, wakenet=tuple(n for n in plan.wake.wakenet if n not in missing),
                                          multinet=tuple(n for n in plan.wake.multinet if n not in missing))
            spec.srmodels = load_models(present, self.inputs.esp_sr)

    def _background_sources(self) -> tuple[Path, Path]:
        light = self.ov.background or self.ov.background_dark
        dark = self.ov.background_dark or self.ov.background
        assert light is not None and dark is not None
        return light, dark

    def _backgrounds(self, plan: VariantPlan, spec: BundleSpec) -> None:
        from assets_gen.image import load_background

        assert plan.display is not None
        w, h = plan.display
        for src, theme in zip(self._background_sources(), (LIGHT, DARK), strict=True):

            def make(src: Path = src, matte: str = theme.background_color) -> bytes:
                return load_background(src, w, h, matte)

            key = make_key("bg", src=self.cache.digest(src), w=w, h=h, matte=theme.background_color, tools=_pillow_id())
            spec.backgrounds.append((str(theme.background_image), self.cache.get_or_make("background", key, make)))
        spec.skin = {"light": LIGHT, "dark": DARK}


@functools.cache
def _pillow_id() -> str:
    import PIL
    from PIL import features

    return f"pillow {PIL.__version__} ft {features.version('freetype2')} zlib {features.version('zlib')}"


def _pack_files(files: list[Any]) -> bytes:
    """Several small files in one cache blob: JSON header line, then the bytes back to back."""
    header = json.dumps([[f.file, len(f.data)] for f in files]).encode() + b"\n"
    return header + b"".join(f.data for f in files)


def _unpack_files(blob: bytes) -> list[tuple[str, bytes]]:
    header, _, rest = blob.partition(b"\n")
    out, pos = [], 0
    for name, size in json.loads(header):
        out.append((name, rest[pos : pos + size]))
        pos += size
    return out
