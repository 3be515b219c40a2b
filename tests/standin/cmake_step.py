"""The stand-in's CMake step: the firmware's real ``main/CMakeLists.txt`` run by Debian's ``cmake -P`` with the
variant's resolved configuration (``config/sdkconfig.cmake`` from kconfgen) through ``idf_shim.cmake``, a
recorded shim of the ESP-IDF functions it calls. It refuses what the real build would refuse or get wrong:

- CMake's own errors (``message(FATAL_ERROR)``: no BOARD_DIR, an invalid BOARD_TYPE/BOARD_NAME, a text font
  name outside upstream's regex), with CMake's message;
- no board source compiled (no ``main/boards/<dir>/`` file other than ``boards/common/`` among the sources:
  an older tree that globs ``boards/${BOARD_TYPE}/*.cc`` given a ``set(BOARD_DIR ...)`` chain);
- a board dir (``BOARD_DIR``, else ``[MANUFACTURER/]BOARD_TYPE`` in trees before 2026-07-27) that does not exist;
- a font or emoji collection the CMake names that the tree's pinned components do not provide
  (``components.py``: ``main/idf_component.yml`` / ``dependencies.lock``).

What the CMake selected (sources, board dir, fonts, emoji collection, compile definitions, partition images,
components) is written to ``<build>/xzbuild-cmake.json``. Nothing here uses xzbuild.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from components import check_fonts, managed_components

HERE = Path(__file__).resolve().parent
SHIM = HERE / "idf_shim.cmake"
OUTPUT = "xzbuild-cmake.json"


class CMakeRefused(Exception):
    """The real build would fail here (or build nothing of the board)."""


def _cmake_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def run_main_cmake(project: Path, build: Path, target: str, board_name: str, idf_version: str,
                   partitions: dict[str, tuple[int, int]], sdkconfig: Path) -> dict[str, object] | None:
    """Run ``main/CMakeLists.txt``; returns what it selected (also written next to the build), or None when the
    project has no ``main/CMakeLists.txt``. Raises CMakeRefused with a one-line reason."""
    main_cmake = project / "main" / "CMakeLists.txt"
    if not main_cmake.is_file():
        return None
    cmake = shutil.which("cmake")
    if cmake is None:
        raise CMakeRefused("cmake not found (apt-get install cmake): the stand-in runs main/CMakeLists.txt with it")
    work = build / "xzbuild-cmake"
    work.mkdir(parents=True, exist_ok=True)
    record = work / "record.tsv"
    record.write_text("", encoding="utf-8")
    major, minor, patch = (idf_version.split(".") + ["0", "0"])[:3]
    components = managed_components(project)
    lines = [
        "cmake_minimum_required(VERSION 3.16)",
        f"set(XZ_RECORD {_cmake_string(str(record))})",
        f"set(XZ_MANAGED_DIR {_cmake_string(str(project / 'managed_components'))})",
        f"set(XZ_BUILD_COMPONENTS {_cmake_string(';'.join(['main', *components]))})",
        f"set(IDF_TARGET {_cmake_string(target)})",
        f"set(IDF_VERSION_MAJOR {major})", f"set(IDF_VERSION_MINOR {minor})", f"set(IDF_VERSION_PATCH {patch})",
        f"set(IDF_PATH {_cmake_string(str(work / 'esp-idf'))})",
        f"set(PROJECT_DIR {_cmake_string(str(project))})",
        f"set(CMAKE_SOURCE_DIR {_cmake_string(str(project))})",
        f"set(CMAKE_BINARY_DIR {_cmake_string(str(build))})",
        f"set(CMAKE_CURRENT_BINARY_DIR {_cmake_string(str(build / 'esp-idf' / 'main'))})",
        f"set(CMAKE_CURRENT_SOURCE_DIR {_cmake_string(str(project / 'main'))})",
        f"set(CMAKE_CURRENT_LIST_DIR {_cmake_string(str(project / 'main'))})",
        f"set(SDKCONFIG {_cmake_string(str(sdkconfig))})",
        f"set(COMPONENT_DIR {_cmake_string(str(project / 'main'))})",
        "set(COMPONENT_NAME main)",
    ]
    if board_name:
        lines.append(f"set(BOARD_NAME {_cmake_string(board_name)})")
    for name, (offset, size) in partitions.items():
        if re.fullmatch(r"[A-Za-z0-9_]+", name):
            lines += [f"set(XZ_PART_{name}_offset {offset:#x})", f"set(XZ_PART_{name}_size {size:#x})"]
    lines += [f"include({_cmake_string(str(build / 'config' / 'sdkconfig.cmake'))})",
              f"include({_cmake_string(str(SHIM))})",
              f"include({_cmake_string(str(main_cmake))})",
              'foreach(_v BOARD_DIR BOARD_TYPE MANUFACTURER BOARD_NAME BOARD_MANUFACTURER BUILTIN_TEXT_FONT BUILTIN_ICON_FONT '
              'DEFAULT_EMOJI_COLLECTION LANG_DIR)',
              '    if(DEFINED ${_v})',
              '        _xz_record(VAR "${_v}=${${_v}}")',
              '    endif()',
              'endforeach()']
    driver = work / "driver.cmake"
    driver.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = subprocess.run([cmake, "-P", str(driver)], cwd=work, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise CMakeRefused(_cmake_error(proc.stderr, main_cmake))
    selected = _selection(project, record.read_text(encoding="utf-8"))
    _refusals(project, selected)
    (build / OUTPUT).write_text(json.dumps(selected, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return selected


def _cmake_error(stderr: str, main_cmake: Path) -> str:
    """CMake's first error as one line (``CMake Error at main/CMakeLists.txt:839 (message): text``)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("CMake Error"):
            where = line.replace(str(main_cmake.parent.parent) + "/", "")
            detail = lines[i + 1] if i + 1 < len(lines) and not lines[i + 1].startswith("CMake") else ""
            return f"{where} {detail}".strip()
    return (lines[-1] if lines else "cmake failed") + f" (running {main_cmake})"


def _selection(project: Path, record: str) -> dict[str, object]:
    main = project / "main"
    out: dict[str, object] = {"sources": [], "variables": {}, "compile_definitions": [], "flash": {},
                              "requires": [], "downloads": [], "spiffs": {}, "build_properties": []}
    sources: list[str] = out["sources"]  # type: ignore[assignment]
    variables: dict[str, str] = out["variables"]  # type: ignore[assignment]
    for line in record.splitlines():
        kind, _, value = line.partition("\t")
        if kind == "SRC":
            path = Path(value) if Path(value).is_absolute() else main / value
            try:
                sources.append(path.resolve().relative_to(main.resolve()).as_posix())
            except ValueError:
                sources.append(str(path))
        elif kind == "VAR":
            key, _, val = value.partition("=")
            variables[key] = val
        elif kind == "DEFINE":
            out["compile_definitions"].append(value)  # type: ignore[attr-defined]
        elif kind in ("FLASH", "SPIFFS", "MMAP_ASSETS"):
            part, _, file = value.partition("=")
            out["flash" if kind == "FLASH" else "spiffs"][part] = file  # type: ignore[index]
        elif kind == "REQUIRES":
            out["requires"].append(value)  # type: ignore[attr-defined]
        elif kind == "DOWNLOAD":
            out["downloads"].append(value)  # type: ignore[attr-defined]
        elif kind == "BUILD_PROPERTY":
            out["build_properties"].append(value)  # type: ignore[attr-defined]
        elif kind == "EMBED_FILES":
            out["embed_files"] = int(value or 0)
    out["board_sources"] = [s for s in sources if s.startswith("boards/") and not s.startswith("boards/common/")]
    out["text_font"] = variables.get("BUILTIN_TEXT_FONT", "")
    out["icon_font"] = variables.get("BUILTIN_ICON_FONT", "")
    out["emoji_collection"] = variables.get("DEFAULT_EMOJI_COLLECTION", "")
    # early-2026 trees: set(MANUFACTURER "m") + set(BOARD_TYPE "b") selects boards/m/b (their glob reads both)
    maker = variables.get("MANUFACTURER", "")
    out["board_dir"] = variables.get("BOARD_DIR") or (f"{maker}/" if maker else "") + variables.get("BOARD_TYPE", "")
    return out


def _refusals(project: Path, selected: dict[str, object]) -> None:
    variables: dict[str, str] = selected["variables"]  # type: ignore[assignment]
    board_dir = str(selected["board_dir"])
    named = "BOARD_DIR" if variables.get("BOARD_DIR") else "BOARD_TYPE"
    if board_dir and not (project / "main" / "boards" / board_dir).is_dir():
        raise CMakeRefused(f"CMake selected board dir main/boards/{board_dir} ({named}), which does not exist: "
                           "the build would compile no board")
    if not selected["board_sources"]:
        raise CMakeRefused(f"main/CMakeLists.txt compiles no board source (board dir {board_dir or 'unset'}, "
                           f"{named}): the real build would fail to link; does the chain set the variable the "
                           "tree's file(GLOB boards/...) reads?")
    problem = check_fonts(project, {"text font": str(selected["text_font"]), "icon font": str(selected["icon_font"]),
                                    "emoji collection": str(selected["emoji_collection"])})
    if problem:
        raise CMakeRefused(problem)
