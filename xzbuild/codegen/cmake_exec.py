"""The executing drift gate: run the tree's ``main/CMakeLists.txt`` with Debian's ``cmake`` for every variant and
compare what it leaves (board dir and type, fonts, emoji collection, board name, the compile definitions of the
board identity) with the board files, whatever syntax set them.

The textual rules of :mod:`xzbuild.codegen.global_tables` are the fast early errors; this is the judge. One ``cmake -P``
process evaluates every variant: a driver script defines a small shim of the ESP-IDF functions the file calls
(``idf_component_register``, ``idf_build_get_property``, ...), then, per variant, a function that sets the
variant's configuration as ``CONFIG_*`` variables (as ESP-IDF's ``sdkconfig.cmake`` does), includes the file and
prints the variables (hex-encoded, under a per-run nonce the file cannot predict).

Containment. The file is untrusted (it arrives in pull requests):
- commands that run processes (``execute_process``, ``exec_program``, ``try_run``, ``try_compile``...) are
  defined twice by the shim, so CMake's built-in is unreachable even as ``_execute_process``; calling one stops
  the evaluation and the gate refuses the file at the calling line;
- ``file()`` forwards only reading sub-commands; writing, downloading, copying ones are recorded no-ops
  (``file(DOWNLOAD ... STATUS s)`` reports success so upstream's own download loop proceeds);
- the process itself runs in a user + mount + network namespace (``unshare -rmn``) where every mount is
  read-only, the only writable place is a private tmpfs scratch directory that vanishes with the namespace,
  and there is no network. Without user namespaces the gate refuses to run (it never runs the file bare).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from xzbuild.core import sdkconfig_text
from xzbuild.core.errors import Location, UserError
from xzbuild.core.fontnames import font_meaning
from xzbuild.importer.board import type_from_dir

CMAKE_PATH = "main/CMakeLists.txt"
#: Variables compared with the board files.
VARIABLES = ("BOARD_DIR", "BOARD_TYPE", "BOARD_NAME", "BUILTIN_TEXT_FONT", "BUILTIN_ICON_FONT",
             "DEFAULT_EMOJI_COLLECTION")
#: Compile definitions that carry the board identity into the firmware.
IDENTITY_DEFINES = ("BOARD_TYPE", "BOARD_NAME", "BUILTIN_TEXT_FONT", "BUILTIN_ICON_FONT")
TIMEOUT_S = 120.0

# Commands that run a process: never reachable (defined twice, so the builtin is not left as _name).
_PROCESS_COMMANDS = ("execute_process", "exec_program", "try_run", "try_compile", "ctest_build", "ctest_configure",
                     "ctest_test", "ctest_submit", "ctest_update", "ctest_start", "ctest_run_script",
                     "load_command", "build_command", "ctest_memcheck", "ctest_coverage", "ctest_upload")
# Commands that would change the build or write files: recorded no-ops (the sandbox backs this up).
_NOOP_COMMANDS = ("add_custom_command", "add_custom_target", "esptool_py_flash_to_partition",
                  "build_speaker_assets_bin", "idf_component_register", "idf_build_set_property",
                  "idf_component_set_property", "add_dependencies", "target_link_libraries",
                  "target_include_directories", "target_sources", "configure_file", "install", "write_file",
                  "make_directory", "remove", "set_target_properties", "set_source_files_properties",
                  "spiffs_create_partition_image", "spiffs_create_partition_assets", "fatfs_create_spiflash_image",
                  "idf_build_component",
                  "add_subdirectory", "add_library", "add_executable")
# Commands whose arguments may define a macro for the firmware: recorded.
_DEFINE_COMMANDS = ("target_compile_definitions", "add_compile_definitions", "add_definitions",
                    "target_compile_options", "add_compile_options", "idf_build_set_property",
                    "set_target_properties", "target_link_options", "add_link_options")
_FILE_READS = ("READ", "STRINGS", "GLOB", "GLOB_RECURSE", "TO_CMAKE_PATH", "TO_NATIVE_PATH", "REAL_PATH",
               "RELATIVE_PATH", "SIZE", "TIMESTAMP", "MD5", "SHA1", "SHA224", "SHA256", "SHA384", "SHA512",
               "READ_SYMLINK", "IS_NEWER_THAN")

_SANDBOX = r"""
for mp in $(awk '{print $5}' /proc/self/mountinfo | sort -u); do
  mount -o remount,bind,ro "$mp" 2>/dev/null
done
mount -t tmpfs -o size=16m,mode=700 tmpfs "$XZ_BOX" || exit 97
# every other mount must now be read-only, else the file is not run
awk -v box="$XZ_BOX" '$5 != box && $6 !~ /^ro(,|$)/ && $9 !~ /^(proc|sysfs|cgroup2?|devpts|mqueue)$/ \
  && $5 !~ /^\/(proc|sys|dev)(\/|$)/ {bad=1; print "writable mount " $5 > "/dev/stderr"} END {exit bad ? 98 : 0}' \
  /proc/self/mountinfo || exit 98
cd "$XZ_BOX" || exit 97
cp "$XZ_DRIVER" "$XZ_BOX/driver.cmake" || exit 97
exec "$@" driver.cmake
"""


@dataclass
class VariantInput:
    """One variant to evaluate: its name, its configuration and what the board files say."""

    name: str  # the variant's full name (BOARD_NAME, as `matrix build` passes it)
    target: str
    config: Mapping[str, str]  # CONFIG_X -> value (strings unquoted)
    expected: dict[str, str]  # VARIABLES -> value ("" = unset)
    location: Location | None = None


@dataclass
class Evaluation:
    """What the file left for each variant, and the seconds the single cmake process took."""

    values: dict[str, dict[str, str]] = field(default_factory=dict)
    defines: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0


def _bracket(text: str) -> str:
    level = 1
    while f"]{'=' * level}]" in text:
        level += 1
    eq = "=" * level
    return f"[{eq}[{text}]{eq}]"


def _shim(nonce: str) -> str:
    out = ["cmake_policy(SET CMP0057 NEW)"]
    for name in _PROCESS_COMMANDS:
        for _ in range(2):
            out.append(f"function({name})\n  message(FATAL_ERROR \"XZREFUSE{nonce} {name}\")\nendfunction()")
    for name in _NOOP_COMMANDS:
        if name in _DEFINE_COMMANDS:
            continue
        out.append(f"function({name})\nendfunction()")
    for name in _DEFINE_COMMANDS:
        out.append(f"function({name})\n  set_property(GLOBAL APPEND PROPERTY XZDEFS{nonce} \"{name}\" ${{ARGV}})\n"
                   "endfunction()")
    reads = " ".join(_FILE_READS)
    out.append(f"""function(file sub)
  if(sub IN_LIST _xz_reads{nonce})
    _file(${{ARGV}})
    foreach(_v IN ITEMS ${{ARGV}})
      if(_v MATCHES "^[A-Za-z0-9_.+-]+$")
        if(DEFINED ${{_v}})
          set(${{_v}} "${{${{_v}}}}" PARENT_SCOPE)
        endif()
      endif()
    endforeach()
  elseif(sub STREQUAL "DOWNLOAD")
    cmake_parse_arguments(_d "" "STATUS" "" ${{ARGN}})
    if(_d_STATUS)
      set(${{_d_STATUS}} "0;\\"not downloaded (xzbuild drift gate)\\"" PARENT_SCOPE)
    endif()
  endif()
endfunction()
set(_xz_reads{nonce} {reads})
function(idf_build_get_property var)
  set(${{var}} "" PARENT_SCOPE)
endfunction()
function(idf_component_get_property var)
  set(${{var}} "" PARENT_SCOPE)
endfunction()
function(partition_table_get_partition_info var)
  set(${{var}} "" PARENT_SCOPE)
endfunction()
function(_xz_put{nonce} i name value)
  string(HEX "${{value}}" _h)
  message("XZ{nonce}|${{i}}|${{name}}|${{_h}}")
endfunction()""")
    return "\n".join(out) + "\n"


def _variant_block(i: int, v: VariantInput, cmake_file: Path, source_dir: Path, tree: Path, nonce: str,
                   idf_major: int) -> str:
    lines = [f"function(_xz_variant{nonce}_{i})"]
    target = v.target
    config = {**v.config, "CONFIG_IDF_TARGET": target, f"CONFIG_IDF_TARGET_{target.upper()}": "y"}
    for key, value in sorted(config.items()):
        if re.fullmatch(r"CONFIG_[A-Za-z0-9_]+", key) and value not in ("n", ""):
            lines.append(f"  set({key} {_bracket(value)})")
    lines += [f"  set(IDF_TARGET {_bracket(target)})", f"  set(IDF_VERSION_MAJOR {idf_major})",
              f"  set(BOARD_NAME {_bracket(v.name)})", "  set(COMPONENT_LIB __idf_main)",
              f"  set(PROJECT_DIR {_bracket(str(tree))})", f"  set(CMAKE_CURRENT_SOURCE_DIR {_bracket(str(source_dir))})",
              f"  set(SDKCONFIG {_bracket(str(tree / 'sdkconfig'))})",
              f"  set_property(GLOBAL PROPERTY XZDEFS{nonce} \"\")",
              "  set_property(DIRECTORY PROPERTY COMPILE_DEFINITIONS \"\")",
              "  set_property(DIRECTORY PROPERTY COMPILE_OPTIONS \"\")",
              f"  message(\"XZ{nonce}|{i}|begin|\")",
              f"  include({_bracket(str(cmake_file))})"]
    for name in VARIABLES:
        lines.append(f"  _xz_put{nonce}({i} {name} \"${{{name}}}\")")
    lines += [f"  get_property(_d GLOBAL PROPERTY XZDEFS{nonce})",
              "  get_property(_dd DIRECTORY PROPERTY COMPILE_DEFINITIONS)",
              "  get_property(_do DIRECTORY PROPERTY COMPILE_OPTIONS)",
              f"  _xz_put{nonce}({i} defines \"${{_d}};${{_dd}};${{_do}}\")",
              f"  message(\"XZ{nonce}|{i}|end|\")", "endfunction()", f"_xz_variant{nonce}_{i}()"]
    return "\n".join(lines) + "\n"


def _sandbox_cmd(cmake: str) -> list[str]:
    unshare = shutil.which("unshare")
    if unshare is None:
        raise UserError("the drift gate runs main/CMakeLists.txt in a sandbox and needs unshare(1) (apt-get "
                        "install util-linux)")
    return [unshare, "-rmn", "--propagation", "private", "bash", "-c", _SANDBOX, "bash", cmake, "-P"]


def evaluate(cmake_text: str, tree: Path, variants: list[VariantInput], *, idf_major: int = 6,
             path: str = CMAKE_PATH) -> Evaluation:
    """Run ``cmake_text`` (the tree's ``main/CMakeLists.txt`` as generate leaves it) once per variant."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise UserError("the drift gate evaluates main/CMakeLists.txt with cmake; install it (apt-get install cmake)")
    nonce = secrets.token_hex(8)
    result = Evaluation()
    with tempfile.TemporaryDirectory(prefix="xzbuild-cmake-gate-") as tmp:
        box = Path(tmp) / "box"
        box.mkdir()
        cmake_file = Path(tmp) / "CMakeLists.txt"
        cmake_file.write_text(cmake_text, encoding="utf-8")
        source_dir = (tree / "main").resolve()
        driver = Path(tmp) / "driver.cmake"
        driver.write_text("cmake_minimum_required(VERSION 3.16)\n" + _shim(nonce) + "".join(
            _variant_block(i, v, cmake_file, source_dir, tree.resolve(), nonce, idf_major)
            for i, v in enumerate(variants)), encoding="utf-8")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "XZ_BOX": str(box), "XZ_DRIVER": str(driver),
               "LC_ALL": "C"}
        start = time.monotonic()
        try:
            proc = subprocess.run(_sandbox_cmd(cmake), capture_output=True, text=True, errors="replace", env=env,
                                  cwd=tmp, timeout=TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise UserError(f"evaluating the board table with cmake took over {TIMEOUT_S:.0f} s; remove loops that "
                            "do not end", Location(path)) from None
        result.seconds = time.monotonic() - start
    if proc.returncode in (97, 98):
        raise UserError("cannot sandbox cmake to evaluate main/CMakeLists.txt (user namespaces unavailable: "
                        f"{proc.stderr.strip()[-200:]}); enable unprivileged user namespaces",
                        Location(path))
    current = -1
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 4 or parts[0] != f"XZ{nonce}":
            continue
        i = int(parts[1])
        if parts[2] == "begin":
            current = i
            continue
        if parts[2] == "end":
            continue
        value = bytes.fromhex(parts[3]).decode("utf-8", "replace")
        name = variants[i].name
        if parts[2] == "defines":
            result.defines[name] = [d for d in value.split(";") if d]
        else:
            result.values.setdefault(name, {})[parts[2]] = value
    if proc.returncode != 0:
        who = variants[current].name if 0 <= current < len(variants) else "the first variant"
        raise UserError(_failure(proc.stderr, nonce, who, cmake_file, path), _where(proc.stderr, cmake_file, path))
    missing = [v.name for v in variants if v.name not in result.defines]
    if missing:
        raise UserError(f"evaluating main/CMakeLists.txt left no result for {missing[0]} (a command of the file "
                        "was redefined?); do not redefine CMake's commands", Location(path))
    return result


def _where(stderr: str, cmake_file: Path, path: str) -> Location:
    m = re.search(rf"{re.escape(str(cmake_file))}:(\d+)", stderr)
    return Location(path, int(m.group(1))) if m else Location(path)


def _failure(stderr: str, nonce: str, who: str, cmake_file: Path, path: str) -> str:
    refused = re.search(rf"XZREFUSE{nonce} (\w+)", stderr)
    if refused:
        return (f"runs {refused.group(1)}() while configuring {who}; a board table may not run processes (remove "
                "it)")
    text = " ".join(ln.strip() for ln in stderr.splitlines() if ln.strip() and not ln.startswith(f"XZ{nonce}|"))
    text = text.replace(str(cmake_file), path)
    return f"cmake stops while configuring {who}: {text[:300]}; fix main/CMakeLists.txt"


def compare(evaluation: Evaluation, variants: Iterable[VariantInput], path: str = CMAKE_PATH,
            cmake_text: str | None = None) -> list[UserError]:
    """Each difference between what the file left and what the board files say, one error per variant.

    A variable the file never names and leaves empty is one this tree does not use (trees older than the
    config.json BOARD_TYPE, small test trees): it is not compared."""
    named = {n for n in VARIABLES if cmake_text is None or re.search(rf"\b{n}\b", cmake_text)}
    errors = []
    for v in variants:
        got = evaluation.values.get(v.name, {})
        for name in VARIABLES:
            want = v.expected.get(name, "")
            if name not in named and not got.get(name, ""):
                continue
            if name in v.expected and _meaning(name, got.get(name, "")) != _meaning(name, want):
                errors.append(UserError(
                    f"{path}: for {v.name} the CMake leaves {name}={got.get(name, '')!r} but the board file says "
                    f"{want!r}; a statement outside the generated table overrides it: remove it", v.location))
                break
        else:
            bad = _identity_defines(evaluation.defines.get(v.name, []), v.expected, got)
            if bad:
                errors.append(UserError(f"{path}: for {v.name} {bad}; remove it (the board identity comes from "
                                        "the board files)", v.location))
    return errors


def _meaning(name: str, value: str) -> str:
    """What a value means: a font as today's model spells it (a tree's own older spelling, which generate keeps,
    names the same font: core.fontnames.font_meaning); other values as they are."""
    if name in ("BUILTIN_TEXT_FONT", "BUILTIN_ICON_FONT"):
        return font_meaning(value)
    return value


def _identity_defines(defines: list[str], expected: Mapping[str, str], got: Mapping[str, str]) -> str | None:
    """A compile definition of the board identity other than upstream's one ``target_compile_definitions``."""
    seen: dict[str, list[str]] = {}
    for item in defines:
        text = item.strip()
        for prefix in ("-D", "/D"):
            text = text.removeprefix(prefix)
        name, _, value = text.partition("=")
        if name in IDENTITY_DEFINES:
            seen.setdefault(name, []).append(value.strip().strip('"').replace('\\"', ""))
    for name, values in seen.items():
        want = got.get(name, "")
        if len(values) > 1:
            return f"the compile definitions set {name} {len(values)} times ({', '.join(values)})"
        if values[0].strip('\\"') != want.strip('"'):
            return f"the compile definition {name}={values[0]} differs from the board's {want!r}"
    return None


def board_variants(board_set: object) -> list[VariantInput]:
    """Every variant of ``board_set`` with its configuration (the target's defaults, the board line and the
    append, as ``matrix build`` layers them) and what its board file says the CMake must leave."""
    from xzbuild.model.types import BoardSet
    from xzbuild.sdkconfig.fragment import board_lines

    assert isinstance(board_set, BoardSet)
    defaults = board_set.firmware.cmake_defaults
    out = []
    for board in board_set.boards:
        for v in board.variants:
            entry = v.kconfig
            if entry is None:
                continue
            config = {k: sdkconfig_text.unquote(val) for k, val in v.effective_sdkconfig.items()}
            config.update((a.key, a.value) for a in sdkconfig_text.read_lines(board_lines(v)[1]))
            config[entry.config] = "y"
            # A type the importer spelled from a dir no type can name (EnglishTeacher -> englishteacher; the
            # tree's config.json has no type): the tree's CMake reports the dir itself, and generate keeps it so.
            leaf = board.dir.rsplit("/", 1)[-1]
            reported = leaf if leaf != board.type and type_from_dir(leaf) == board.type else board.type
            expected = {"BOARD_DIR": board.dir, "BOARD_TYPE": reported, "BOARD_NAME": v.full_name,
                        "DEFAULT_EMOJI_COLLECTION": entry.emoji_collection or ""}
            # A font the branch does not set is the facts' default; facts without one leave it to the tree.
            for name, own in (("BUILTIN_TEXT_FONT", entry.text_font), ("BUILTIN_ICON_FONT", entry.icon_font)):
                if own or name in defaults:
                    expected[name] = own or defaults[name]
            out.append(VariantInput(v.full_name, board.target, config, expected, v.location()))
    return out


_RUNNERS = re.compile(r"\b_*(" + "|".join(_PROCESS_COMMANDS) + r")\b", re.I)


def refuse_process_commands(cmake_text: str, path: str = CMAKE_PATH) -> None:
    """A board table may not name a command that runs a process, even in a branch no variant takes (the shim
    only sees the branches the variants evaluate): refused at its line, before cmake runs."""
    m = _RUNNERS.search(cmake_text)
    if m is not None:
        line = cmake_text.count("\n", 0, m.start()) + 1
        raise UserError(f"names {m.group(0)}, a command that runs a process; a board table may not run processes "
                        "(remove it)", Location(path, line))


def check_tree(board_set: object, cmake_text: str, tree: Path, path: str = CMAKE_PATH) -> tuple[list[UserError], float]:
    """The executing gate over every variant: (errors, seconds cmake took)."""
    refuse_process_commands(cmake_text, path)
    variants = board_variants(board_set)
    evaluation = evaluate(cmake_text, tree, variants, path=path)
    return compare(evaluation, variants, path, cmake_text), evaluation.seconds
