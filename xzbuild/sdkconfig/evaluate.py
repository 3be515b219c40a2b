"""Evaluate sdkconfig fragments against the firmware's Kconfig, with the IDF symbols it needs stubbed.

Upstream never validates a variant's ``sdkconfig_append``: a line whose dependencies fail on the target
(``m5stack/stick-s3`` enables ``USE_ESP_WAKE_WORD`` on an ESP32-S3) is silently dropped by Kconfig. Here
the firmware's ``main/Kconfig.projbuild`` is loaded with esp-idf-kconfig on top of stub definitions for
every symbol it references but ESP-IDF would define (``IDF_TARGET_*`` fixed by the target, the rest
user-settable bools), the upstream layers are applied (``sdkconfig.defaults``, ``.<target>``, fragment),
and every fragment line that names a firmware symbol is compared with the value Kconfig settles on.
Symbols the firmware Kconfig does not define (ESP-IDF component options) are outside this check.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xzbuild.core import sdkconfig_text
from xzbuild.core.kconfig import load_file, quiet
from xzbuild.core.sdkdefaults import defaults_files

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Chip capabilities the firmware Kconfig tests; ESP-IDF's soc_caps define them per target.
TARGET_CAPABILITIES: dict[str, frozenset[str]] = {
    "esp32p4": frozenset({"SOC_JPEG_DECODE_SUPPORTED", "SOC_JPEG_ENCODE_SUPPORTED"}),
}


def merge_assignments(assignments: Iterable[sdkconfig_text.Assignment],
                      into: dict[str, sdkconfig_text.Assignment] | None = None) -> dict[str, sdkconfig_text.Assignment]:
    """``CONFIG_X`` → its last assignment; a name assigned again moves to the end, so the merged lines keep the
    order in which the layers last set each name (esp-idf-kconfig settles a choice by its last ``=y``)."""
    merged = {} if into is None else into
    for a in assignments:
        merged.pop(a.key, None)
        merged[a.key] = a
    return merged


def defaults_layers(firmware: Path, target: str) -> dict[str, sdkconfig_text.Assignment]:
    """The defaults files ESP-IDF loads for ``target`` (``xzbuild.core.sdkdefaults``: the root
    ``sdkconfig.defaults`` and its ``.<target>`` companion, neither without the root file), merged by key."""
    merged: dict[str, sdkconfig_text.Assignment] = {}
    for path in defaults_files(firmware, target):
        merge_assignments(sdkconfig_text.read_file(path), merged)
    return merged


@dataclass(frozen=True)
class Dropped:
    """A fragment line Kconfig does not honour: ``index`` into the fragment, the value it ends up with."""

    index: int
    line: str
    resolved: str


@dataclass
class Evaluation:
    """Result of one fragment: all symbol values (sdkconfig spelling, no prefix) and the dropped lines."""

    values: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    dropped: list[Dropped] = field(default_factory=list)

    def c_defines(self) -> dict[str, str]:
        """``CONFIG_*`` macros as ESP-IDF's sdkconfig.h spells them (bool y -> 1, n -> absent)."""
        out: dict[str, str] = {}
        for name, value in self.values.items():
            kind = self.types.get(name, "")
            if value == "n" or (kind == "bool" and value != "y"):
                continue
            if value == "y":
                out[f"CONFIG_{name}"] = "1"
            elif kind == "string":
                out[f"CONFIG_{name}"] = sdkconfig_text.quote(value)
            else:
                out[f"CONFIG_{name}"] = value
        return out


class KconfigEvaluator:
    """Loads ``kconfig_text`` (the firmware's Kconfig.projbuild, possibly regenerated) once per target."""

    def __init__(self, kconfig_text: str, firmware: Path) -> None:
        self.firmware = firmware
        self._tmp = tempfile.TemporaryDirectory(prefix="xzbuild-kconfig-")
        self._dir = Path(self._tmp.name)
        (self._dir / "Kconfig.projbuild").write_text(kconfig_text, encoding="utf-8")
        self._stubs = self._undefined_symbols()
        self._by_target: dict[str, Any] = {}

    def close(self) -> None:
        """Remove the temporary Kconfig files."""
        self._tmp.cleanup()

    def __enter__(self) -> KconfigEvaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _load(self, top: Path) -> Any:
        return load_file(top)

    def _undefined_symbols(self) -> set[str]:
        top = self._dir / "Kconfig.probe"
        top.write_text(f'mainmenu "xzbuild"\nsource "{self._dir / "Kconfig.projbuild"}"\n', encoding="utf-8")
        kconf = self._load(top)
        return {n for n, s in kconf.syms.items() if not s.nodes and _NAME.fullmatch(n) and not n.isdigit()}

    def _kconfig(self, target: str) -> Any:
        if target not in self._by_target:
            caps = TARGET_CAPABILITIES.get(target, frozenset())
            stubs = []
            for name in sorted(self._stubs):
                if name.startswith("IDF_TARGET_") or name in caps or name.startswith("SOC_"):
                    on = name == f"IDF_TARGET_{target.upper()}" or name in caps
                    stubs.append(f"config {name}\n    bool\n    default {'y' if on else 'n'}\n")
                else:
                    stubs.append(f'config {name}\n    bool "{name} (ESP-IDF stub)"\n')
            top = self._dir / f"Kconfig.{target}"
            text = 'mainmenu "xzbuild"\n' + "".join(stubs) + f'source "{self._dir / "Kconfig.projbuild"}"\n'
            top.write_text(text, encoding="utf-8")
            self._by_target[target] = self._load(top)
        return self._by_target[target]

    def evaluate(self, target: str, fragment: list[str]) -> Evaluation:
        """Apply base, target and ``fragment`` layers on ``target``; report fragment lines Kconfig drops."""
        kconf = self._kconfig(target)
        merged = defaults_layers(self.firmware, target)
        assignments = sdkconfig_text.read_lines(fragment, "fragment")
        merge_assignments(assignments, merged)
        config = self._dir / "sdkconfig.in"
        config.write_text("".join(a.text + "\n" for a in merged.values()), encoding="utf-8")
        with quiet():
            kconf.load_config(str(config), replace=True)
        result = Evaluation()
        # Raw values first (ESP-IDF component symbols the firmware Kconfig does not know) ...
        for a in merged.values():
            result.values[a.name] = a.value
            result.types[a.name] = "string" if a.raw.startswith('"') else ""
        # ... then what the firmware Kconfig evaluates, which wins for the symbols it defines.
        for name, sym in kconf.syms.items():
            if not sym.nodes or name in self._stubs and not name.startswith(("IDF_TARGET_", "SOC_")):
                continue
            kind = _type_name(sym)
            if kind == "bool" and sym.str_value == "n" and not sym.visibility and name not in result.values:
                continue  # invisible and off: sdkconfig.h would not mention it
            result.values[name] = sym.str_value
            result.types[name] = kind
        for a in assignments:
            sym = kconf.syms.get(a.name)
            if sym is None or not sym.nodes or a.name in self._stubs:
                continue
            if _normalise(sym.str_value, _type_name(sym)) != _normalise(a.value, _type_name(sym)):
                result.dropped.append(Dropped(a.line - 1, fragment[a.line - 1], sym.str_value or '""'))
        return result


def _type_name(sym: Any) -> str:
    from esp_kconfiglib import core

    names = {core.BOOL: "bool", core.STRING: "string", core.INT: "int", core.HEX: "hex"}
    return names.get(sym.orig_type, "")


def _normalise(value: str, kind: str) -> str:
    if kind == "hex":
        try:
            return hex(int(value, 16))
        except ValueError:
            return value
    if kind == "int":
        try:
            return str(int(value, 0))
        except ValueError:
            return value
    return value


