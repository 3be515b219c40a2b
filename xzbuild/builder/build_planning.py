"""Build planning as a library call: ``plan_build(BuildRequest(...))`` → runner, ESP-IDF version, jobs, refusals.

Also the selection helpers (names, --all, --select, shard) and the firmware tree lookup."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from xzbuild.builder.job import BuildJob
from xzbuild.builder.pool import BuildOptions
from xzbuild.builder.runner import Runner
from xzbuild.core.errors import UserError

if TYPE_CHECKING:
    from xzbuild.matrix import MatrixEntry

SELECT_KEYS = ("target", "board", "name", "full_name", "manufacturer", "preview")


def find_firmware(path: Path | None) -> Path:
    """The firmware checkout (``--firmware``, else the current directory if it is one)."""
    root = (path or Path.cwd()).resolve()
    if not (root / "CMakeLists.txt").is_file():
        hint = "pass --firmware <xiaozhi-esp32 checkout>" if path is None else "is this a xiaozhi-esp32 checkout?"
        raise UserError(f"{root}: no CMakeLists.txt; {hint}")
    return root


def _matches(entry: MatrixEntry, key: str, pattern: str) -> bool:
    if key == "manufacturer":
        value = entry.board.split("/", 1)[0] if "/" in entry.board else ""
    elif key == "preview":
        return str(entry.preview).lower() == pattern.lower()
    else:
        value = str(getattr(entry, key))
    return fnmatch.fnmatchcase(value, pattern)


def parse_selectors(selectors: Sequence[str]) -> dict[str, list[str]]:
    """``["target=esp32s3", "board=waveshare/*"]`` → {key: [globs]}; keys are ANDed, globs of a key ORed."""
    out: dict[str, list[str]] = {}
    for text in selectors:
        key, sep, pattern = text.partition("=")
        key = key.strip()
        if not sep or key not in SELECT_KEYS or not pattern:
            raise UserError(f"--select {text!r}: expected KEY=GLOB with KEY one of {', '.join(SELECT_KEYS)}")
        out.setdefault(key, []).append(pattern.strip())
    return out


def choose_entries(entries: list[MatrixEntry], names: Sequence[str], all_: bool,
                   selectors: Sequence[str]) -> list[MatrixEntry]:
    """The entries a command line asks for (listing order); unknown names are errors with suggestions."""
    if not names and not all_ and not selectors:
        raise UserError("nothing selected: name variants, or use --all or --select KEY=GLOB")
    chosen: dict[str, MatrixEntry] = {}
    if all_:
        chosen.update((e.full_name, e) for e in entries)
    by_name: dict[str, list[MatrixEntry]] = {}
    for e in entries:
        for alias in {e.full_name, e.name, e.board, *(e.variant.legacy_names if e.variant else [])}:
            by_name.setdefault(alias, []).append(e)
    for name in names:
        hits = by_name.get(name)
        if not hits:
            close = difflib.get_close_matches(name, list(by_name), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else "; see `xzbuild matrix list`"
            raise UserError(f"unknown variant {name!r}{hint}")
        chosen.update((e.full_name, e) for e in hits)
    if selectors:
        rules = parse_selectors(selectors)
        pool = list(chosen.values()) if (names or all_) else entries
        chosen = {e.full_name: e for e in pool
                  if all(any(_matches(e, k, p) for p in pats) for k, pats in rules.items())}
        if not chosen:
            for key, pats in rules.items():
                if not any(_matches(e, key, p) for e in pool for p in pats):
                    values = sorted({str(e.preview).lower() if key == "preview" else
                                     (e.board.split("/", 1)[0] if key == "manufacturer" else str(getattr(e, key)))
                                     for e in pool})
                    shown = ", ".join(values[:12]) + (", ..." if len(values) > 12 else "")
                    raise UserError(f"--select {key}={'|'.join(pats)} matches no variant; {key} values here: {shown}")
            raise UserError("the --select filters together match no variant; loosen one of them")
    order = {e.full_name: i for i, e in enumerate(entries)}
    return sorted(chosen.values(), key=lambda e: order[e.full_name])


# ---- the typed request behind `xzbuild matrix build` ----

@dataclass(frozen=True)
class BuildRequest:
    """Everything a matrix build is asked to do; ``xzbuild matrix build`` fills it from its options."""

    variants: tuple[str, ...] = ()  # names, full names or board dirs
    all: bool = False  # every variant listed for the ESP-IDF version
    selectors: tuple[str, ...] = ()  # KEY=GLOB filters (target, board, name, full_name, manufacturer, preview)
    shard: str | None = None  # I/N
    jobs: int = 2  # parallel builds
    keep_going: bool = False  # build the rest after a failure
    force: bool = False  # ignore the artifact cache
    firmware: Path | None = None  # xiaozhi-esp32 checkout (default: the current directory)
    idf: str = "local"  # runner: local | docker:IMAGE | standin
    idf_version: str | None = None  # must agree with the runner's own version
    out: Path = Path("dist")
    boards_dir: Path = Path("boards")
    cache_dir: Path = Path(".xzbuild-cache")
    build_root: Path | None = None  # per-variant build dirs (default: <cache_dir>/work)
    base_url: str = ""  # where dist/ is published (absolute OTA URLs)
    relative_urls: bool = False  # opt in to ota.json URLs relative to the variant dir
    container_runtime: str = "docker"
    language: str | None = None
    wake_word: str | None = None
    build_options: dict[str, object] | None = None
    allow_drift: bool = False  # build even when generated files differ from boards/ (recorded)
    wait_for_out: bool = True  # another run holds --out: wait for it (False: refuse)


@dataclass
class BuildPlan:
    """What a request resolves to: the runner, the ESP-IDF version, the jobs and the records known up front."""

    runner: Runner
    idf: str
    jobs: list[BuildJob]
    options: BuildOptions
    repo_root: Path

    def dry_run(self) -> list[str]:
        """Per job: a comment line with the cache state, then the exact commands."""
        import shlex

        from xzbuild.builder.job import TreeDigest, cache_key
        from xzbuild.builder.runner import cached_object

        tree = TreeDigest(self.runner.firmware, self.runner.cache_root)
        lines = [f"# {r.full_name} refused ({r.reason}): {r.error}" for r in self.options.refused]
        for job in self.jobs:
            key = cache_key(job, tree, self.repo_root, self.runner.mode)
            state = "cached" if cached_object(self.runner.cache_root, key) and not self.options.force else "build"
            lines.append(f"# {job.full_name} ({job.target}) {state} key={key[:16]}")
            lines.extend(shlex.join(command) for command in self.runner.commands(job))
        return lines


def check_base_url(base_url: str, relative_urls: bool) -> None:
    """ota.json must hold a URL a device can fetch: an absolute http(s) ``--base-url``, or ``--relative-urls``."""
    from urllib.parse import urlsplit

    if base_url:
        if relative_urls:
            raise UserError("--base-url and --relative-urls exclude each other")
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UserError(f"--base-url {base_url!r}: expected an absolute http(s) URL such as "
                            "https://example.com/firmware/v2.4.2")
    elif not relative_urls:
        raise UserError("ota.json needs an absolute firmware URL: pass --base-url https://HOST/PATH (where this "
                        "dist/ is published), or --relative-urls to write URLs relative to each variant dir")


def plan_build(request: BuildRequest) -> BuildPlan:
    """Resolve a request: runner and ESP-IDF version, chosen variants, jobs, pre-build identity checks."""
    from dataclasses import replace

    from xzbuild.builder.identity import preflight, project_name
    from xzbuild.builder.job import make_jobs
    from xzbuild.builder.results import BuildRecord, BuildStatus
    from xzbuild.builder.toolchain import check_runner, idf_executable, resolve_idf_version
    from xzbuild.core.fsutil import refuse_linked_subdirs
    from xzbuild.matrix import apply_shard, list_variants
    from xzbuild.model import load_boards

    check_base_url(request.base_url, request.relative_urls)
    check_runner(request.idf)
    refuse_linked_subdirs(request.out, "--out")
    refuse_linked_subdirs(request.cache_dir, "--cache-dir")
    fw = find_firmware(request.firmware)
    cache_root = request.cache_dir.resolve()
    runner = Runner(firmware=fw, build_root=(request.build_root or cache_root / "work").resolve(),
                    cache_root=cache_root, mode=request.idf, container_runtime=request.container_runtime,
                    idf_exe=idf_executable(request.idf))
    idf = resolve_idf_version(request.idf, request.idf_version, cache_root)
    board_set = load_boards(request.boards_dir)
    entries = choose_entries(list_variants(board_set, idf=idf), request.variants, request.all, request.selectors)
    enabled = apply_shard([e for e in entries if e.enabled], request.shard)
    disabled = [] if request.shard else [e for e in entries if not e.enabled]
    jobs = make_jobs(enabled, fw, board_set, idf, language=request.language, wake_word=request.wake_word,
                     build_options=request.build_options)
    checked = preflight(jobs, fw, board_set, allow_drift=request.allow_drift)
    refused = [BuildRecord(full_name=j.full_name, board=j.board, name=j.name, target=j.target, idf=idf,
                           status=BuildStatus.FAILED, reason=checked.refused[j.full_name].reason,
                           error=checked.refused[j.full_name].message) for j in jobs if j.full_name in checked.refused]
    jobs = [replace(j, drift=tuple(checked.drift.get(j.full_name, ()))) for j in jobs
            if j.full_name not in checked.refused]
    extra = [BuildRecord(full_name=e.full_name, board=e.board, name=e.name, target=e.target, idf=idf,
                         status=BuildStatus.DISABLED, reason=e.reason, shard=request.shard) for e in disabled]
    repo_root = Path(board_set.root).resolve().parent
    options = BuildOptions(jobs=request.jobs, keep_going=request.keep_going, force=request.force, out=request.out,
                           base_url=request.base_url, relative_urls=request.relative_urls, shard=request.shard,
                           repo_root=repo_root, extra_records=extra, refused=refused,
                           project_name=project_name(fw), wait_for_out=request.wait_for_out)
    return BuildPlan(runner=runner, idf=idf, jobs=jobs, options=options, repo_root=repo_root)
