"""The oracle for `matrix select --mode pr`, written for the tests: it imports nothing from xzbuild.

A class claims that its variants link alike and, with a unit, preprocess that unit to the same text. The
oracle checks both on the tree of the commit judged (`judge`), from outside references only:
- each variant is that commit's build (`commit_fragments`: its ``config.json`` build, found by directory or
  by name and target, whatever the board-directory layout), with the sdkconfig fragment the commit's own
  ``scripts/build.py`` (``build_board``) passes to ESP-IDF, captured by running it with its idf.py step
  replaced; before that script existed, the board line its release script picked (`board_symbol`) and the
  build's append;
- the fragment is resolved through the commit's ``main/Kconfig.projbuild`` with esp-idf-kconfig, on top of the
  commit's ``sdkconfig.defaults`` layers (ESP-IDF's own symbols stubbed: ``IDF_TARGET_*`` by target, the rest
  as settable bools), and written as ``sdkconfig.h`` would define it;
- link: the gated statements of ``main/CMakeLists.txt`` that decide sources, include directories and
  components, and the values of their conditions' symbols, evaluated here (`link_key`);
- the board identity macros come from the tree's ``main/CMakeLists.txt`` as the resolved configuration
  executes it (`font_values`: top-level defaults, the board branch its values select, later assignments);
  the string ones — board type, name, manufacturer — are one placeholder literal for every variant: their
  content, limited by CMake to ``[a-z0-9.-]``, changes no compile or link result; font identifiers are the
  variant's own;
- ``gcc -E -H`` preprocesses the unit with the tree's include directories, the board directory, and empty
  stubs for every header the tree does not contain (ESP-IDF, components, the C/C++ library).
Every member of a class must link as the representative does, give its preprocessed output exactly, and
resolve every ``CONFIG_*`` symbol of the files gcc read alike.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)
_ASSIGN = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_CAPTURE = r'''
import importlib.util, json, sys
sys.argv = ["build.py"]
spec = importlib.util.spec_from_file_location("upstream_build", "scripts/build.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
class Captured(Exception):
    pass
def configure(target, sdkconfig_append, *args, **kwargs):
    raise Captured(list(sdkconfig_append))
# The step that hands the fragment to ESP-IDF: _configure_build since 2026-08-04, _regenerate_sdkconfig before.
for name in ("_configure_build", "_regenerate_sdkconfig"):
    if hasattr(mod, name):
        setattr(mod, name, configure)
for name in ("_prepare_target", "_ensure_target", "_emit_build_stage"):
    if hasattr(mod, name):
        setattr(mod, name, lambda *args, **kwargs: True)
out = {}
for record in json.load(sys.stdin):
    try:
        mod.build_board(record["board"], name_filter=record["name"], idf_version=(6, 0, 2))
    except Captured as got:
        out[record["full_name"]] = got.args[0]
    except (Exception, SystemExit):
        pass  # the commit's own builder refuses this variant (3ac6d89d: a config.json without "type"): unjudged
print(json.dumps(out))
'''
_EXPLICIT_BOARD = re.compile(r"^(CONFIG_BOARD_TYPE_[A-Za-z0-9_]+)=y$")


def upstream_fragments(tree: Path, records: list[dict[str, object]]) -> dict[str, list[str]]:
    """full_name → the sdkconfig_append upstream's build.py gives ESP-IDF for that variant."""
    proc = subprocess.run([sys.executable, "-c", _CAPTURE], cwd=tree, input=json.dumps(records), text=True,
                          capture_output=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class Build:
    """One release build as a commit's tree describes it."""

    board: str  # its directory under main/boards at that commit
    name: str
    target: str
    append: tuple[str, ...]


def commit_builds(tree: Path) -> list[Build]:
    """Every build of every ``main/boards/**/config.json`` of the tree."""
    out = []
    boards = tree / "main" / "boards"
    for path in sorted(boards.rglob("config.json")):
        board = path.parent.relative_to(boards).as_posix()
        if path.parent.name == "common":
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue  # a config.json the commit's own build could not read either: its variants stay unjudged
        for build in data.get("builds", []):
            out.append(Build(board, build["name"], data["target"], tuple(build.get("sdkconfig_append", []))))
    return out


def board_symbol(tree: Path, build: Build) -> str | None:
    """The ``CONFIG_BOARD_TYPE_*`` a build of that commit sets, by the rule its release script used: an
    explicit line of the append, else the guard of the ``main/CMakeLists.txt`` branch that sets BOARD_TYPE to
    the directory's name (several: the one whose Kconfig entry depends on the target, else the first)."""
    explicit = [m.group(1) for line in build.append if (m := _EXPLICIT_BOARD.match(line.strip()))]
    if explicit:
        return explicit[0]
    lines = (tree / "main" / "CMakeLists.txt").read_text(encoding="utf-8").splitlines()
    leaf = build.board.split("/")[-1]
    candidates = []
    for index, line in enumerate(lines):
        if f'set(BOARD_TYPE "{leaf}")' in line:
            for back in reversed(lines[:index]):
                if "if(CONFIG_BOARD_TYPE_" in back:
                    candidates.append(back.strip().split("if(")[1].split(")")[0])
                    break
    if not candidates:
        return None  # an older layout this rule does not describe: the variant is left unjudged
    entries = re.split(r"^\s*(?:menu)?config\s+", (tree / "main" / "Kconfig.projbuild").read_text(encoding="utf-8"),
                       flags=re.MULTILINE)
    depends = {e.split(None, 1)[0]: " ".join(line for line in e.splitlines() if "depends on" in line)
               for e in entries[1:] if e.strip()}
    flag = re.compile(rf"\bIDF_TARGET_{build.target.upper()}\b")
    by_target = [c for c in candidates if flag.search(depends.get(c.removeprefix("CONFIG_"), ""))]
    return (by_target or candidates)[0]


def commit_fragments(tree: Path, records: list[dict[str, object]]) -> dict[str, tuple[Build, list[str]]]:
    """Today's variants (upstream listing records) → (their build, their sdkconfig fragment) at the tree's
    commit. A variant is that commit's build in the same directory with the same name (or the directory's only
    build, for the target), else the one build of that name and target (the directory moved: the 2026-07-27 reorganisation by manufacturer); variants the
    commit has no build for are left out. The fragment is what the commit's own ``scripts/build.py`` gives
    ESP-IDF where it has one; before it (``scripts/release.py``), the board line and the append."""
    builds = commit_builds(tree)
    by_dir = {(b.board, b.name): b for b in builds}
    by_name: dict[tuple[str, str], list[Build]] = {}
    for build in builds:
        by_name.setdefault((build.name, build.target), []).append(build)
    found: dict[str, Build] = {}
    for record in records:
        build = by_dir.get((str(record["board"]), str(record["name"])))
        in_dir = [b for b in builds if b.board == record["board"]]
        if build is None and len(in_dir) == 1 and in_dir[0].target == record["target"]:
            build = in_dir[0]  # renamed in place: the directory's only build
        if build is None:
            same = by_name.get((str(record["name"]), str(record["target"])), [])
            build = same[0] if len(same) == 1 else None
        if build is not None:
            found[str(record["full_name"])] = build
    if (tree / "scripts" / "build.py").is_file():
        asked = [{"board": b.board, "name": b.name, "full_name": n} for n, b in found.items()]
        captured = upstream_fragments(tree, asked)
        return {n: (b, captured[n]) for n, b in found.items() if n in captured}
    out = {}
    for full_name, build in found.items():
        symbol = board_symbol(tree, build)
        if symbol is None:
            continue
        rest = [line for line in build.append if not _EXPLICIT_BOARD.match(line.strip())]
        out[full_name] = (build, [f"{symbol}=y", *rest])
    return out


def archive(repo: Path, rev: str, dest: Path) -> Path:
    """Extract the tree of ``rev`` (main/, sdkconfig.defaults*, scripts/) into ``dest``."""
    data = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", rev], capture_output=True,
                          check=True).stdout
    with tempfile.TemporaryFile() as fh:
        fh.write(data)
        fh.seek(0)
        with tarfile.open(fileobj=fh) as tar:
            tar.extractall(dest, filter="data")
    return dest


class Defines:
    """``#define`` lines sdkconfig.h would hold for a fragment on a target in one tree (Kconfig loaded once
    per target)."""

    def __init__(self, tree: Path) -> None:
        from esp_pylib.logger import log

        self._verbosity = getattr(log, "_verbosity", 1)
        log.set_verbosity(0)  # esp-idf-kconfig's NOTE lines about choice symbols; values are what matter
        self.tree = tree
        self._tmp = tempfile.TemporaryDirectory()
        self._work = Path(self._tmp.name)
        self._kconf: dict[str, object] = {}
        self._undefined: list[str] | None = None

    def _kconfig(self, target: str):  # type: ignore[no-untyped-def]
        import esp_kconfiglib

        projbuild = self.tree / "main" / "Kconfig.projbuild"
        if self._undefined is None:
            probe = self._work / "probe"
            probe.write_text(f'mainmenu "oracle"\nsource "{projbuild}"\n', encoding="utf-8")
            self._undefined = sorted(n for n, s in esp_kconfiglib.Kconfig(str(probe), warn=False).syms.items()
                                     if not s.nodes and re.fullmatch(r"[A-Za-z_]\w*", n))
        if target not in self._kconf:
            stubs = []
            for name in self._undefined:
                if name.startswith(("IDF_TARGET_", "SOC_")):
                    on = name == f"IDF_TARGET_{target.upper()}" or (
                        target == "esp32p4" and name in ("SOC_JPEG_DECODE_SUPPORTED", "SOC_JPEG_ENCODE_SUPPORTED"))
                    stubs.append(f"config {name}\n    bool\n    default {'y' if on else 'n'}\n")
                else:
                    stubs.append(f'config {name}\n    bool "{name}"\n')
            top = self._work / f"Kconfig.{target}"
            top.write_text('mainmenu "oracle"\n' + "".join(stubs) + f'source "{projbuild}"\n', encoding="utf-8")
            self._kconf[target] = esp_kconfiglib.Kconfig(str(top), warn=False)
        return self._kconf[target]

    def __call__(self, target: str, fragment: list[str]) -> str:
        from esp_kconfiglib.core import TYPE_TO_STR

        layers: dict[str, str] = {}
        for name in ("sdkconfig.defaults", f"sdkconfig.defaults.{target}"):
            path = self.tree / name
            lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
            for line in [*lines, *([] if name != f"sdkconfig.defaults.{target}" else fragment)]:
                m = _ASSIGN.match(line.strip())
                if m:
                    layers[m.group(1)] = m.group(2)
        kconf = self._kconfig(target)
        assert self._undefined is not None
        config = self._work / "sdkconfig"
        config.write_text("".join(f"{k}={v}\n" for k, v in layers.items()), encoding="utf-8")
        kconf.load_config(str(config), replace=True)
        values = {k.removeprefix("CONFIG_"): (v[1:-1] if v.startswith('"') else v) for k, v in layers.items()}
        kinds = {k.removeprefix("CONFIG_"): ("string" if v.startswith('"') else "") for k, v in layers.items()}
        for name, sym in kconf.syms.items():
            if sym.nodes and (name not in self._undefined or name.startswith(("IDF_TARGET_", "SOC_"))):
                values[name] = sym.str_value
                kinds[name] = TYPE_TO_STR[sym.orig_type]
        lines = []
        for name in sorted(values):
            value, kind = values[name], kinds.get(name, "")
            if value == "n" or (kind == "bool" and value != "y") or value == "":
                continue
            if value == "y":
                lines.append(f"#define CONFIG_{name} 1")
            elif kind == "string":
                lines.append(f'#define CONFIG_{name} "{value}"')
            else:
                lines.append(f"#define CONFIG_{name} {value}")
        return "\n".join(lines) + "\n"

    def close(self) -> None:
        from esp_pylib.logger import log

        log.set_verbosity(self._verbosity)  # the logger is shared with esptool: leave it as found
        self._tmp.cleanup()


def include_dirs(tree: Path) -> list[Path]:
    """main/ and the INCLUDE_DIRS main/CMakeLists.txt lists, plus boards/common."""
    cmake = (tree / "main" / "CMakeLists.txt").read_text(encoding="utf-8")
    dirs = [tree / "main"]
    for block in re.findall(r"set\s*\(\s*INCLUDE_DIRS\s+([^)]*)\)", cmake):
        dirs += [tree / "main" / d for d in re.findall(r'"([^"]+)"', block)]
    dirs.append(tree / "main" / "boards" / "common")
    return dirs


def make_stubs(tree: Path, stub_dir: Path, dirs: Iterable[Path]) -> None:
    """An empty file for every included name no include directory (nor the includer's own) holds."""
    dirs = list(dirs)
    for source in (tree / "main").rglob("*"):
        if source.suffix not in (".c", ".cc", ".cpp", ".h", ".hpp") or not source.is_file():
            continue
        for name in _INCLUDE.findall(source.read_text(encoding="utf-8", errors="replace")):
            if (source.parent / name).is_file() or any((d / name).is_file() for d in dirs):
                continue
            stub = stub_dir / name
            if ".." not in Path(name).parts:
                stub.parent.mkdir(parents=True, exist_ok=True)
                stub.touch()


@dataclass(frozen=True)
class Job:
    """One preprocessing: ``unit`` as variant ``full_name`` compiles it."""

    full_name: str
    unit: str
    board: str
    defines: str
    flags: tuple[str, ...]


_HEADER_TRACE = re.compile(r"^\.+ (.+)$")


def preprocess(tree: Path, stub_dir: Path, dirs: list[Path], job: Job, scratch: Path) -> tuple[str, frozenset[str]]:
    """gcc -E output (and any error) of one job: what the compiler proper would see; and the tree's files
    gcc read for it (its ``-H`` trace: the unit and every header it included, relative to the tree)."""
    header = scratch / f"{abs(hash((job.full_name, job.unit)))}-sdkconfig.h"
    header.write_text(job.defines, encoding="utf-8")
    lang = "c" if job.unit.endswith(".c") else "c++"
    args = ["gcc", "-E", "-P", "-H", "-x", lang, "-nostdinc", "-undef", "-include", str(header),
            *job.flags, f"-I{tree / 'main' / 'boards' / job.board}", *(f"-I{d}" for d in dirs), f"-I{stub_dir}",
            str(tree / job.unit)]
    proc = subprocess.run(args, capture_output=True, text=True, errors="replace", check=False)
    read = {job.unit}
    errors = []
    for line in proc.stderr.splitlines():
        trace = _HEADER_TRACE.match(line)
        if trace is None:
            errors.append(line.replace(str(tree), "TREE").replace(str(header), "SDKCONFIG"))
            continue
        path = Path(os.path.normpath(trace.group(1)))
        if path.is_relative_to(tree):
            read.add(path.relative_to(tree).as_posix())
    return f"rc={proc.returncode}\n" + "\n".join(errors) + f"\n{proc.stdout}", frozenset(read)


def run_jobs(tree: Path, stub_dir: Path, dirs: list[Path], jobs: list[Job]
             ) -> dict[tuple[str, str], tuple[str, frozenset[str]]]:
    """Preprocess every job (as many at a time as there are cores)."""
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        outputs = pool.map(lambda j: preprocess(tree, stub_dir, dirs, j, Path(tmp)), jobs)
        return {(j.full_name, j.unit): out for j, out in zip(jobs, outputs, strict=True)}


def values(defines: str) -> dict[str, str]:
    """``#define CONFIG_X v`` lines (as `Defines` writes them) → {X: v}; a symbol not defined is off."""
    out = {}
    for line in defines.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1].startswith("CONFIG_"):
            out[parts[1].removeprefix("CONFIG_")] = parts[2]
    return out


_CMAKE_WORD = re.compile(r"^\s*(if|elseif|else|endif)\s*\((.*)\)\s*$", re.IGNORECASE)
#: Statements that decide what a variant compiles and links: edits of the source and include-directory lists
#: and of the component requirements (a required component's sources are compiled too), and source globs.
_LISTING = re.compile(r"^\s*(?:(?:set|list\s*\(\s*(?:APPEND|REMOVE_ITEM))\s*\(?\s*(\w*(?:SOURCES|SRCS|INCLUDE_DIRS|REQUIRES)\w*)\b"
                      r"|file\s*\(\s*GLOB)", re.IGNORECASE)
_CONDITION_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def _truth(condition: str, config: dict[str, str]) -> bool | None:
    """A CMake ``if()`` condition over ``CONFIG_*`` variables (NOT/AND/OR/parentheses); None for anything else."""
    tokens = _CONDITION_TOKEN.findall(condition)
    pos = 0

    def atom() -> bool | None:
        nonlocal pos
        token = tokens[pos] if pos < len(tokens) else ""
        pos += 1
        if token.upper() == "NOT":
            inner = atom()
            return None if inner is None else not inner
        if token == "(":
            inner = either()
            pos += 1  # ")"
            return inner
        if token.startswith("CONFIG_"):
            value = config.get(token.removeprefix("CONFIG_"), "")
            return value not in ("", "0", "n", '""')
        return None

    def both() -> bool | None:
        nonlocal pos
        result = atom()
        while pos < len(tokens) and tokens[pos].upper() == "AND":
            pos += 1
            other = atom()
            result = False if result is False or other is False else (None if None in (result, other) else True)
        return result

    def either() -> bool | None:
        nonlocal pos
        result = both()
        while pos < len(tokens) and tokens[pos].upper() == "OR":
            pos += 1
            other = both()
            result = True if result is True or other is True else (None if None in (result, other) else False)
        return result

    return either()


def _cmake_statements(tree: Path) -> tuple[str, ...]:
    """``main/CMakeLists.txt`` as whole statements (comments dropped, continuation lines joined)."""
    return _statements((tree / "main" / "CMakeLists.txt").read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=4)  # asked once per member of a commit's classes
def _statements(text: str) -> tuple[str, ...]:
    out: list[str] = []
    statement = ""
    for raw in text.splitlines():
        statement += " " + raw.split("#", 1)[0]
        if statement.count("(") > statement.count(")"):
            continue
        if statement.strip():
            out.append(statement.strip())
        statement = ""
    return tuple(out)


def _blocks(tree: Path) -> Iterator[tuple[str, list[list[str]]]]:
    """Each statement of ``main/CMakeLists.txt`` other than ``if/elseif/else/endif``, with the open ``if()``
    blocks around it: per block, its branch conditions so far (the last one is the branch the statement is
    in; ``""`` for ``else``)."""
    frames: list[list[str]] = []
    for text in _cmake_statements(tree):
        word = _CMAKE_WORD.match(text)
        if word is None:
            yield text, frames
            continue
        kind = word.group(1).lower()
        if kind == "if":
            frames.append([word.group(2)])
        elif kind == "elseif" and frames:
            frames[-1].append(word.group(2))
        elif kind == "else" and frames:
            frames[-1].append("")
        elif kind == "endif" and frames:
            frames.pop()


def _executes(frames: list[list[str]], config: dict[str, str]) -> bool | None:
    """Whether a configuration executes a statement inside ``frames`` (`_blocks`): in every block, no
    earlier branch holds and its own does. None where a condition the oracle cannot evaluate decides it."""
    truth: bool | None = True
    for branches in frames:
        *before, current = branches
        parts = [_truth(c, config) for c in before]
        here = True if current == "" else _truth(current, config)
        taken: bool | None = False if True in parts else (None if None in parts else True)
        step = False if False in (taken, here) else (None if None in (taken, here) else True)
        truth = False if False in (truth, step) else (None if None in (truth, step) else True)
    return truth


_FONT_VARS = ("BUILTIN_TEXT_FONT", "BUILTIN_ICON_FONT")
_SET_FONT = re.compile(r"^set\s*\(\s*(BUILTIN_TEXT_FONT|BUILTIN_ICON_FONT)\s+\"?([^\s\")]+)\"?\s*\)$", re.IGNORECASE)


def font_values(tree: Path, config: dict[str, str]) -> dict[str, str]:
    """The font variables as CMake leaves them for a resolved configuration: every ``set()`` of them the
    configuration executes, in file order (top-level defaults, then the board branch its ``CONFIG_*`` values
    take, then any later assignment). A set under a condition the oracle cannot evaluate makes the variable
    ``?`` (unknown, never equal to a real font, so the judgement stays strict)."""
    found: dict[str, str] = {}
    for text, frames in _blocks(tree):
        m = _SET_FONT.match(text)
        if not m:
            continue
        truth = _executes(frames, config)
        if truth is True:
            found[m.group(1).upper()] = m.group(2)
        elif truth is None:
            found[m.group(1).upper()] = "?"
    return found


def identity_macros(tree: Path, config: dict[str, str]) -> list[str]:
    """``-D`` flags for the board identity and fonts ``main/CMakeLists.txt`` defines for a variant whose resolved
    ``CONFIG_*`` values are ``config``: the fonts as `font_values` leaves them (the branch taken is the one
    the resolved configuration selects, as in CMake: a board line Kconfig dropped selects the choice's default
    board), each only where the tree's compile definitions pass it."""
    cmake = (tree / "main" / "CMakeLists.txt").read_text(encoding="utf-8")
    # The identity strings (CMake allows [a-z0-9.-] only) are literals whose content changes no compile or
    # link result: every variant gets the same one, so outputs differ only where compiling could.
    flags = [f'-D{name}="<board identity>"' for name in ("BOARD_TYPE", "BOARD_NAME", "BOARD_MANUFACTURER")]
    fonts = font_values(tree, config)
    for var in _FONT_VARS:
        if f"{var}=${{{var}}}" in cmake and var in fonts:
            flags.append(f"-D{var}={fonts[var]}")
    font = re.match(r"font_noto_sans_basic_(\d+)_(\d+)$", fonts.get("BUILTIN_TEXT_FONT", ""))
    if font and "TEXT_FONT_SIZE=" in cmake:
        flags += [f"-DTEXT_FONT_SIZE={font.group(1)}", f"-DTEXT_FONT_BPP={font.group(2)}"]
    return flags


def link_key(tree: Path, config: dict[str, str]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """What decides a variant's link in ``main/CMakeLists.txt`` (evaluated here, from the tree): the gated
    statements that list sources, include directories or required components, or glob sources, that it
    takes (one whose gate cannot be told counts, marked), and the values of every ``CONFIG_*`` symbol in a
    condition that gates such a statement."""
    compiled: list[str] = []
    gating: set[str] = set()
    for text, frames in _blocks(tree):
        if not _LISTING.match(text) or not frames:
            continue
        for branches in frames:
            for cond in branches:
                gating.update(s.removeprefix("CONFIG_") for s in re.findall(r"\bCONFIG_\w+", cond))
        truth = _executes(frames, config)
        if truth is True:
            compiled.append(" ".join(text.split()))
        elif truth is None:
            compiled.append(f"(unknown gate) {text}")
    return tuple(sorted(set(compiled))), tuple(sorted((s, config.get(s, "")) for s in gating))


_SYMBOL = re.compile(r"\bCONFIG_([A-Za-z0-9_]+)")


@dataclass
class Verdict:
    """One commit's classes judged: what failed, how much ran, and what could not be judged."""

    commit: str
    classes: int
    gcc_runs: int = 0
    refuted: list[str] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)  # members the commit has no build for
    unnecessary: int = 0  # splits whose representatives preprocess alike
    link_checks: int = 0


def judge(repo: Path, rev: str, classes: list[dict[str, object]], records: list[dict[str, object]],
          work: Path) -> Verdict:
    """Judge PR mode's classes for commit ``rev`` (as `matrix select --mode pr --json` prints them) on that
    commit's own tree, each member configured as that commit builds it (`commit_fragments`):
    - every class (with or without a unit): every member's link (`link_key`) equals the representative's;
    - a class with a unit: every member preprocesses it exactly as the representative, and resolves every
      ``CONFIG_*`` symbol mentioned in the files gcc read for it (the unit and its headers) to the same value.
    Members the commit has no build for (boards added later) are listed as unjudged."""
    import shutil

    verdict = Verdict(rev[:10], len(classes))
    tree = archive(repo, rev, work / rev[:10])
    stub_dir = work / f"{rev[:10]}-stubs"
    try:
        dirs = include_dirs(tree)
        make_stubs(tree, stub_dir, dirs)
        at = commit_fragments(tree, records)
        members = sorted({str(m) for c in classes for m in c["members"]})  # type: ignore[attr-defined]
        verdict.unjudged = [m for m in members if m not in at]
        resolve = Defines(tree)
        try:
            defines = {m: resolve(at[m][0].target, at[m][1]) for m in members if m in at}
        finally:
            resolve.close()
        config = {m: values(text) for m, text in defines.items()}
        jobs = []
        flags_of: dict[str, tuple[str, ...]] = {}
        for klass in classes:
            if not klass["unit"]:
                continue
            for member in klass["members"]:  # type: ignore[attr-defined]
                if member not in at:
                    continue
                if member not in flags_of:
                    flags_of[member] = tuple(identity_macros(tree, config[member]))
                jobs.append(Job(member, str(klass["unit"]), at[member][0].board, defines[member], flags_of[member]))
        outputs = run_jobs(tree, stub_dir, dirs, list(dict.fromkeys(jobs)))
        verdict.gcc_runs = len(outputs)
        links: dict[str, tuple[object, ...]] = {}
        texts: dict[str, frozenset[str]] = {}

        def mentioned(files: frozenset[str]) -> set[str]:
            out: set[str] = set()
            for path in files:
                if path not in texts:
                    file = tree / path
                    text = file.read_text(encoding="utf-8", errors="replace") if file.is_file() else ""
                    texts[path] = frozenset(_SYMBOL.findall(text))
                out |= texts[path]
            return out

        rep_outputs: dict[str, list[str]] = {}
        for klass in classes:
            judged = [str(m) for m in klass["members"] if m in at]  # type: ignore[attr-defined]
            if not judged:
                continue
            rep = str(klass["representative"]) if klass["representative"] in at else judged[0]
            label = f"{klass['unit'] or 'no unit'} ({klass['path']})"
            for member in judged:
                if member not in links:
                    links[member] = (at[member][0].target, *link_key(tree, config[member]))
            verdict.link_checks += len(judged)
            for member in judged:
                if links[member] != links[rep]:
                    theirs, ours = links[rep], links[member]
                    what = [f"target {theirs[0]} != {ours[0]}"] if theirs[0] != ours[0] else []
                    what += [f"only {rep}: {sorted(set(theirs[i]) - set(ours[i]))[:3]}, only {member}: "  # type: ignore[call-overload]
                             f"{sorted(set(ours[i]) - set(theirs[i]))[:3]}" for i in (1, 2) if theirs[i] != ours[i]]
                    verdict.refuted.append(f"link of {label}: {member} differs from {rep}: {'; '.join(what)[:400]}")
            unit = str(klass["unit"] or "")
            if not unit:
                continue
            expected, read = outputs[(rep, unit)]
            rep_outputs.setdefault(unit, []).append(expected)
            for member in judged:
                got, member_read = outputs[(member, unit)]
                if got != expected:
                    diff = list(difflib.unified_diff(expected.splitlines(), got.splitlines(), lineterm="", n=0))[2:8]
                    verdict.refuted.append(f"{label}: {member} preprocesses differently from {rep}: {' | '.join(diff)}")
                    continue
                symbols = mentioned(read | member_read)
                differ = sorted(s for s in symbols if config[member].get(s) != config[rep].get(s))
                if differ:
                    verdict.refuted.append(f"{label}: {member} resolves {', '.join(f'{s}={config[member].get(s)}' for s in differ[:4])}"
                                           f" where {rep} has {', '.join(f'{s}={config[rep].get(s)}' for s in differ[:4])}")
        verdict.unnecessary = sum(len(outs) - len(set(outs)) for outs in rep_outputs.values())
    finally:
        shutil.rmtree(tree, ignore_errors=True)
        shutil.rmtree(stub_dir, ignore_errors=True)
    return verdict
