"""Preprocessor equivalence of two config.h files: ``gcc -E -dM`` with a variant's CONFIG_ symbols.

Headers a config.h includes from ESP-IDF (``<driver/gpio.h>`` ...) are replaced by empty stubs created on
demand, so only the board's own macros are compared. Equivalent means: every macro the reference
defines is defined by the candidate with the same (whitespace-normalised) expansion and parameter list,
and both hit the same ``#error`` lines.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

_MISSING = re.compile(r"fatal error: ([^:\n]+): No such file or directory")
_ERROR = re.compile(r"error: #error (.*)")
_DEFINE = re.compile(r"^#define (\w+)(\([^)]*\))?(?: (.*))?$")


@dataclass
class HeaderMacros:
    """Macros a header leaves defined (name -> params+expansion) and the ``#error`` texts it reached."""

    macros: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


@dataclass
class Equivalence:
    """Comparison result; ``ok`` when nothing is missing or different and the errors agree."""

    missing: list[str] = field(default_factory=list)
    different: list[tuple[str, str, str]] = field(default_factory=list)
    errors: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))

    @property
    def ok(self) -> bool:
        return not self.missing and not self.different and self.errors[0] == self.errors[1]

    def describe(self) -> str:
        """One-line summary of what differs."""
        parts = []
        if self.missing:
            parts.append("missing " + ", ".join(self.missing[:5]) + (" ..." if len(self.missing) > 5 else ""))
        for name, ref, got in self.different[:3]:
            parts.append(f"{name}: {ref!r} != {got!r}")
        if self.errors[0] != self.errors[1]:
            parts.append(f"#error {self.errors[0]} vs {self.errors[1]}")
        return "; ".join(parts) or "equivalent"


def gcc_path() -> str | None:
    """The C compiler driver used for preprocessing, if installed."""
    return shutil.which("gcc") or shutil.which("cpp")


def header_macros(header: Path, defines: dict[str, str], work: Path, max_stubs: int = 200) -> HeaderMacros:
    """Preprocess ``header`` with ``defines`` predefined; stubs for missing includes go under ``work/stubs``."""
    gcc = gcc_path()
    if gcc is None:
        raise RuntimeError("gcc is needed for config.h equivalence (apt-get install gcc)")
    stubs = work / "stubs"
    stubs.mkdir(parents=True, exist_ok=True)
    prelude = work / "defines.h"
    prelude.write_text("".join(f"#define {k} {v}\n" for k, v in sorted(defines.items())), encoding="utf-8")
    cmd = [gcc, "-E", "-dM", "-x", "c", "-undef", "-nostdinc", "-I", str(stubs), "-include", str(prelude), str(header)]
    for _ in range(max_stubs):
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        missing = _MISSING.search(proc.stderr)
        if missing is None:
            break
        stub = stubs / missing.group(1).strip()
        if stub.exists():  # cannot make progress: report as an error rather than loop
            break
        stub.parent.mkdir(parents=True, exist_ok=True)
        stub.write_text("", encoding="utf-8")
    result = HeaderMacros(errors=sorted(m.group(1).strip() for m in _ERROR.finditer(proc.stderr)))
    for line in proc.stdout.splitlines():
        m = _DEFINE.match(line)
        if m:
            result.macros[m.group(1)] = (m.group(2) or "") + " " + " ".join((m.group(3) or "").split())
    return result


def compare_headers(reference: Path, candidate: Path, defines: dict[str, str], work: Path) -> Equivalence:
    """Check that ``candidate`` defines every macro of ``reference`` identically under ``defines``."""
    ref = header_macros(reference, defines, work)
    got = header_macros(candidate, defines, work)
    result = Equivalence(errors=(ref.errors, got.errors))
    for name, value in sorted(ref.macros.items()):
        if name not in got.macros:
            result.missing.append(name)
        elif got.macros[name] != value:
            result.different.append((name, value.strip(), got.macros[name].strip()))
    return result
