"""Proof of identity per variant: the firmware tree can build the board a variant names, and the build did.

Before building (``preflight``): the tree has ``main/boards/<dir>``; ``main/Kconfig.projbuild`` declares the
variant's ``BOARD_TYPE_*`` symbol and it can be selected on the variant's target; ``generate --check`` is clean
for the files the variant's board owns and for the two board tables. ESP-IDF silently drops an undeclared or
unselectable symbol and builds the target's *default* board, so without these checks a release could carry
another board's firmware under this variant's name.

After configure/build (``verify_build``): the resolved ``config/sdkconfig.json`` (else ``sdkconfig``) selects
exactly the variant's ``BOARD_TYPE_*``; every line of the variant's fragment survived with its value; the app's
``esp_app_desc_t`` names the project, ``PROJECT_VER`` and ESP-IDF version that were asked for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xzbuild.builder.job import BuildJob
from xzbuild.core import sdkconfig_text
from xzbuild.core.cmake import read as read_cmake

if TYPE_CHECKING:
    from xzbuild.model import BoardSet

KCONFIG = "main/Kconfig.projbuild"
TABLES = ("main/Kconfig.projbuild", "main/CMakeLists.txt")
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class Refusal:
    """Why a variant is not built: ``reason`` is ``identity`` or ``drift``; ``message`` is one line."""

    full_name: str
    reason: str
    message: str


@dataclass
class Preflight:
    """Outcome of the pre-build checks: refusals, and per variant the drifted files let through."""

    refused: dict[str, Refusal] = field(default_factory=dict)
    drift: dict[str, list[str]] = field(default_factory=dict)


def _symbol(job: BuildJob) -> str:
    return job.symbol.removeprefix("CONFIG_")


def _declaration_line(kconfig_text: str, symbol: str) -> int | None:
    from xzbuild.core.kconfig import declared

    return declared(kconfig_text).get(symbol)


def _depends(kconfig_text: str, line: int) -> str:
    """The first ``depends on`` of the entry declared at ``line`` (for the refusal message)."""
    from xzbuild.core.kconfig_text import entries

    for entry in entries(kconfig_text):
        if entry.line == line:
            return next((b.text for b in entry.option("depends")), "its dependencies")
    return "its dependencies"


def preflight(jobs: list[BuildJob], firmware: Path, board_set: BoardSet, *, allow_drift: bool = False) -> Preflight:
    """Run the pre-build checks for ``jobs``; refused variants are never handed to idf.py."""
    from xzbuild.codegen import writer
    from xzbuild.codegen.generated_files import build_plan
    from xzbuild.core.errors import UserError
    from xzbuild.sdkconfig.evaluate import KconfigEvaluator

    result = Preflight()
    kconfig_path = firmware / KCONFIG
    try:
        kconfig_text = kconfig_path.read_text(encoding="utf-8")
    except OSError:
        kconfig_text = ""
    present = []
    for job in jobs:
        if not (firmware / "main" / "boards" / job.board).is_dir():
            result.refused[job.full_name] = Refusal(job.full_name, "identity", (
                f"{job.full_name}: {firmware}/main/boards/{job.board} does not exist (generate never ran for "
                f"this board); run `xzbuild generate --firmware {firmware}`"))
            continue
        line = _declaration_line(kconfig_text, _symbol(job))
        if line is None:
            result.refused[job.full_name] = Refusal(job.full_name, "identity", (
                f"{job.full_name}: {KCONFIG} declares no {_symbol(job)}; ESP-IDF would drop it and build the "
                f"default {job.target} board; run `xzbuild generate --firmware {firmware}`"))
            continue
        present.append((job, line))
    if present:
        evaluator = KconfigEvaluator(kconfig_text, firmware)
        try:
            for job, line in present:
                evaluation = evaluator.evaluate(job.target, [f"CONFIG_{_symbol(job)}=y"])
                if evaluation.dropped:
                    result.refused[job.full_name] = Refusal(job.full_name, "identity", (
                        f"{job.full_name}: {_symbol(job)} ({KCONFIG}:{line}) cannot be selected on {job.target}: "
                        f"{_depends(kconfig_text, line)}; fix the board's target or run `xzbuild generate`"))
        finally:
            evaluator.close()
    checked = [job for job in jobs if job.full_name not in result.refused]
    if not checked:
        return result
    try:
        plan = build_plan(board_set, firmware, sorted({job.board for job in checked}))
    except UserError as exc:
        # generate cannot write this tree (the message names the file:line); --allow-drift builds the tree as it is
        # and records why it could not be compared.
        where = f"{exc.location}: " if exc.location else ""
        for job in checked:
            if allow_drift:
                result.drift[job.full_name] = [f"{where}{exc.message}"]
            else:
                result.refused[job.full_name] = Refusal(job.full_name, "drift", f"{job.full_name}: {where}{exc.message}")
        return result
    drifted = [d.path for d in writer.find_drift(plan.files, firmware)]
    for job in checked:
        mine = [p for p in drifted if p.startswith(f"main/boards/{job.board}/")]
        mine += [p for p in drifted if p in TABLES and _row(plan.files[p], p, _symbol(job)) != _row(
            _read(firmware / p), p, _symbol(job))]
        if not mine:
            continue
        if allow_drift:
            result.drift[job.full_name] = mine
            continue
        more = f" (+{len(mine) - 1} more)" if len(mine) > 1 else ""
        result.refused[job.full_name] = Refusal(job.full_name, "drift", (
            f"{job.full_name}: the firmware tree differs from boards/ in {mine[0]}{more} (`xzbuild generate --check`);"
            f" run `xzbuild generate --firmware {firmware}` or pass --allow-drift"))
    return result


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _row(data: bytes, path: str, symbol: str) -> str | None:
    """The variant's own row of a board table: its Kconfig entry, or its CMake ``if``/``elseif`` branch.

    Another board's row differing (a board added without ``generate``) is that board's drift, not this one's.
    """
    text = data.decode("utf-8", errors="replace")
    if path.endswith("Kconfig.projbuild"):
        m = re.search(rf"^[ \t]*config {re.escape(symbol)}\n(?:[ \t]{{5,}}.*\n)*", text, re.M)
    else:
        m = re.search(rf"^(?:if|elseif)\(CONFIG_{re.escape(symbol)}\)\n(?:[ \t]+.*\n)*", text, re.M)
    return m.group(0) if m else None


# ---- after the build ----

def read_resolved(build: Path) -> dict[str, Any]:
    """The resolved configuration: ``config/sdkconfig.json`` as ESP-IDF writes it, else the ``sdkconfig`` read
    by ``xzbuild.core.sdkconfig_text`` and spelled as the JSON does (``y`` true, ``is not set`` false,
    strings unquoted)."""
    try:
        return dict(json.loads((build / "config" / "sdkconfig.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        pass
    values: dict[str, Any] = {}
    path = build / "sdkconfig"
    for a in sdkconfig_text.read_text(path.read_text(encoding="utf-8"), str(path)):
        values[a.name] = False if a.unset else True if a.raw == "y" else a.value
    return values


def fragment_assignments(fragment: str) -> dict[str, str]:
    """``CONFIG_X`` → wanted value as written (``n`` for ``is not set``), last line per key wins."""
    return sdkconfig_text.values(fragment.splitlines(), "fragment")


def _spell(value: Any) -> str:
    if value is None:
        return "absent (undeclared, or its dependencies are not met)"
    if value is True:
        return "y"
    if value is False:
        return "not set"
    return json.dumps(value) if isinstance(value, str) else str(value)


def _survived(wanted: str, got: Any) -> bool:
    if wanted in ("y", "n"):
        return (got is True) if wanted == "y" else got in (False, None)
    if got is None or isinstance(got, bool):
        return False
    if wanted.startswith('"'):
        return str(got) == sdkconfig_text.unquote(wanted)
    try:
        return int(str(got), 0) == int(wanted, 0)
    except ValueError:
        return str(got) == wanted


def config_problems(job: BuildJob, resolved: dict[str, Any]) -> list[str]:
    """Fragment lines the resolved sdkconfig does not honour, and a board choice other than the variant's."""
    problems = []
    selected = sorted(k for k, v in resolved.items() if k.startswith("BOARD_TYPE_") and v is True)
    if selected != [_symbol(job)]:
        problems.append(f"the resolved sdkconfig selects {', '.join(selected) or 'no BOARD_TYPE_*'}, "
                        f"not {_symbol(job)}")
    for key, wanted in fragment_assignments(job.fragment).items():
        got = resolved.get(key[7:])
        if not _survived(wanted, got):
            problems.append(f"{key}={wanted} became {_spell(got)}")
    return problems


def version_of(text: str) -> str | None:
    """``v6.0.2-dirty`` → ``6.0.2``; None when there is no version in front."""
    m = _VERSION.match(text.strip())
    if not m:
        return None
    major, minor, patch = m.groups()
    return f"{int(major)}.{int(minor)}.{int(patch or 0)}"


def app_problems(job: BuildJob, build: Path, project_name: str) -> list[str]:
    """The app descriptor against what was asked for: project name, PROJECT_VER, ESP-IDF version."""
    from xzbuild.core.errors import UserError
    from xzbuild.core.images import inspect_image

    try:
        args = json.loads((build / "flasher_args.json").read_text(encoding="utf-8"))
        app_file = args["app"]["file"]
        info = inspect_image((build / app_file).read_bytes(), job.target, app_file)
    except (OSError, ValueError, KeyError, TypeError, UserError) as exc:
        return [f"cannot read the app image: {exc}"]
    desc = info.app_desc
    if desc is None:
        return [f"{app_file} has no esp_app_desc_t"]
    problems = []
    if desc.project_name != project_name:
        problems.append(f"project name {desc.project_name!r}, expected {project_name!r}")
    if desc.version != job.version:
        problems.append(f"version {desc.version!r}, expected PROJECT_VER {job.version!r}")
    if version_of(desc.idf_ver) != job.idf:
        problems.append(f"ESP-IDF {desc.idf_ver!r}, expected v{job.idf}")
    return [f"{app_file} app descriptor: {p}" for p in problems]


def project_name(firmware: Path) -> str:
    """``project(NAME)`` of the firmware's root CMakeLists.txt (the app's project name)."""
    try:
        text = (firmware / "CMakeLists.txt").read_text(encoding="utf-8")
    except OSError:
        return ""
    for statement in read_cmake(text).statements:
        if statement.word == "project" and statement.command.args:
            m = re.match(r"[A-Za-z0-9_.-]+", statement.command.args[0].value)
            return m.group() if m else ""
    return ""


def verify_build(job: BuildJob, build: Path, expected_project: str) -> tuple[str, list[str]] | None:
    """``(reason, problems)`` when the build is not the variant it claims to be, else None."""
    try:
        resolved = read_resolved(build)
    except OSError:
        return "config", ["neither config/sdkconfig.json nor sdkconfig was generated"]
    problems = config_problems(job, resolved)
    if problems:
        return "config", problems
    problems = app_problems(job, build, expected_project)
    if problems:
        return "identity", problems
    return None


def summarize(problems: Iterable[str]) -> str:
    """One line for the failure summary."""
    return "; ".join(problems)
