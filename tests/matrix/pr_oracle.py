"""The oracle for `matrix select --mode pr`, written for the tests: it imports nothing from xzbuild.

A compile class claims that its variants preprocess a translation unit to the same text. The oracle checks
that claim the way a compiler would see it, from outside references only:
- each variant's sdkconfig fragment is what upstream's own ``scripts/build.py`` (``build_board``) passes to
  ESP-IDF, captured by running that script with its idf.py step replaced;
- the fragment is resolved through the tree's ``main/Kconfig.projbuild`` with esp-idf-kconfig, on top of the
  tree's ``sdkconfig.defaults`` layers (ESP-IDF's own symbols stubbed: ``IDF_TARGET_*`` by target, the rest
  as settable bools), and written as ``sdkconfig.h`` would define it;
- the board identity macros come from the tree's ``main/CMakeLists.txt`` branch for the board's symbol
  (the string ones — board type, name, manufacturer — are one placeholder literal for every variant: their
  content, limited by CMake to ``[a-z0-9.-]``, changes no compile or link result; font identifiers are the
  board's own);
- ``gcc -E`` preprocesses the unit with the tree's include directories, the board directory, and empty
  stubs for every header the tree does not contain (ESP-IDF, components, the C/C++ library).
Every member of a class must give the representative's output exactly.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
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
def configure(target, sdkconfig_append, board_name, preview):
    raise Captured(list(sdkconfig_append))
mod._configure_build = configure
mod._prepare_target = lambda target, preview: None
mod._emit_build_stage = lambda stage: None
out = {}
for record in json.load(sys.stdin):
    try:
        mod.build_board(record["board"], name_filter=record["name"], idf_version=(6, 0, 2))
    except Captured as got:
        out[record["full_name"]] = got.args[0]
print(json.dumps(out))
'''


def upstream_fragments(tree: Path, records: list[dict[str, object]]) -> dict[str, list[str]]:
    """full_name → the sdkconfig_append upstream's build.py gives ESP-IDF for that variant."""
    proc = subprocess.run([sys.executable, "-c", _CAPTURE], cwd=tree, input=json.dumps(records), text=True,
                          capture_output=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


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


def identity_macros(tree: Path, symbol: str, record: dict[str, object]) -> list[str]:
    """``-D`` flags for the board identity main/CMakeLists.txt defines (fonts from the board's branch)."""
    cmake = (tree / "main" / "CMakeLists.txt").read_text(encoding="utf-8")
    branch = re.search(rf"if\s*\(\s*{re.escape(symbol)}\s*\)(.*?)(?=^\s*(?:elseif|else|endif)\s*\()", cmake,
                       re.MULTILINE | re.DOTALL)
    sets = dict(re.findall(r"set\s*\(\s*(\w+)\s+\"?([^\s\")]+)\"?\s*\)", branch.group(1))) if branch else {}
    # The identity strings (CMake allows [a-z0-9.-] only) are literals whose content changes no compile or
    # link result: every variant gets the same one, so outputs differ only where compiling could.
    flags = [f'-D{name}="<board identity>"' for name in ("BOARD_TYPE", "BOARD_NAME", "BOARD_MANUFACTURER")]
    for var in ("BUILTIN_TEXT_FONT", "BUILTIN_ICON_FONT"):
        if var in sets:
            flags.append(f"-D{var}={sets[var]}")
    font = re.match(r"font_noto_sans_basic_(\d+)_(\d+)$", sets.get("BUILTIN_TEXT_FONT", ""))
    if font:
        flags += [f"-DTEXT_FONT_SIZE={font.group(1)}", f"-DTEXT_FONT_BPP={font.group(2)}"]
    return flags


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


def preprocess(tree: Path, stub_dir: Path, dirs: list[Path], job: Job, scratch: Path) -> str:
    """gcc -E output (and any error) of one job: what the compiler proper would see."""
    header = scratch / f"{abs(hash((job.full_name, job.unit)))}-sdkconfig.h"
    header.write_text(job.defines, encoding="utf-8")
    lang = "c" if job.unit.endswith(".c") else "c++"
    args = ["gcc", "-E", "-P", "-x", lang, "-nostdinc", "-undef", "-include", str(header),
            *job.flags, f"-I{tree / 'main' / 'boards' / job.board}", *(f"-I{d}" for d in dirs), f"-I{stub_dir}",
            str(tree / job.unit)]
    proc = subprocess.run(args, capture_output=True, text=True, errors="replace", check=False)
    errors = proc.stderr.replace(str(tree), "TREE").replace(str(header), "SDKCONFIG")
    return f"rc={proc.returncode}\n{errors}\n{proc.stdout}"


def run_jobs(tree: Path, stub_dir: Path, dirs: list[Path], jobs: list[Job]) -> dict[tuple[str, str], str]:
    """Preprocess every job (two at a time: the machine has two cores)."""
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        outputs = pool.map(lambda j: preprocess(tree, stub_dir, dirs, j, Path(tmp)), jobs)
        return {(j.full_name, j.unit): out for j, out in zip(jobs, outputs, strict=True)}
