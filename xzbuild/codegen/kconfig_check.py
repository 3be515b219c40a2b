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

from xzbuild.core.kconfig import load_file, quiet

_ASSIGN = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Chip capabilities the firmware Kconfig tests; ESP-IDF's soc_caps define them per target.
TARGET_CAPABILITIES: dict[str, frozenset[str]] = {
    "esp32p4": frozenset({"SOC_JPEG_DECODE_SUPPORTED", "SOC_JPEG_ENCODE_SUPPORTED"}),
}


def parse_assignments(lines: Iterable[str]) -> dict[str, str]:
    """``CONFIG_X=value`` lines (comments and blanks skipped) merged by key; later lines win."""
    merged: dict[str, str] = {}
    for line in lines:
        m = _ASSIGN.match(line.strip())
        if m:
            merged.pop(m.group(1), None)
            merged[m.group(1)] = m.group(2)
    return merged


def defaults_layers(firmware: Path, target: str) -> dict[str, str]:
    """The defaults files ESP-IDF loads for ``target`` (``xzbuild.core.sdkdefaults``: the root
    ``sdkconfig.defaults`` and its ``.<target>`` companion, neither without the root file), merged by key."""
    from xzbuild.core.sdkdefaults import defaults_files

    lines: list[str] = []
    for path in defaults_files(firmware, target):
        lines.extend(path.read_text(encoding="utf-8").splitlines())
    return parse_assignments(lines)


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
                out[f"CONFIG_{name}"] = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
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
        merged.update(parse_assignments(fragment))
        config = self._dir / "sdkconfig.in"
        config.write_text("".join(f"{k}={v}\n" for k, v in merged.items()), encoding="utf-8")
        with quiet():
            kconf.load_config(str(config), replace=True)
        result = Evaluation()
        # Raw values first (ESP-IDF component symbols the firmware Kconfig does not know) ...
        for key, value in merged.items():
            name = key[len("CONFIG_") :]
            result.values[name] = value[1:-1] if value.startswith('"') and value.endswith('"') else value
            result.types[name] = "string" if value.startswith('"') else ""
        # ... then what the firmware Kconfig evaluates, which wins for the symbols it defines.
        for name, sym in kconf.syms.items():
            if not sym.nodes or name in self._stubs and not name.startswith(("IDF_TARGET_", "SOC_")):
                continue
            kind = _type_name(sym)
            if kind == "bool" and sym.str_value == "n" and not sym.visibility and name not in result.values:
                continue  # invisible and off: sdkconfig.h would not mention it
            result.values[name] = sym.str_value
            result.types[name] = kind
        for index, line in enumerate(fragment):
            m = _ASSIGN.match(line.strip())
            if not m:
                continue
            name = m.group(1)[len("CONFIG_") :]
            sym = kconf.syms.get(name)
            if sym is None or not sym.nodes or name in self._stubs:
                continue
            wanted = m.group(2)
            if wanted.startswith('"') and wanted.endswith('"'):
                wanted = wanted[1:-1]
            if _normalise(sym.str_value, _type_name(sym)) != _normalise(wanted, _type_name(sym)):
                result.dropped.append(Dropped(index, line, sym.str_value or '""'))
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


@dataclass(frozen=True)
class FragmentWarning:
    """A variant fragment line Kconfig drops, with the board-file location that holds it."""

    location: str
    variant: str
    target: str
    line: str
    resolved: str

    def __str__(self) -> str:
        return (
            f"{self.location}: warning: {self.variant}: '{self.line}' is dropped by the firmware Kconfig on "
            f"{self.target} (it resolves to {self.resolved}); fix the dependency or remove the line"
        )


@dataclass(frozen=True)
class UnprefixedWarning:
    """A variant line without ``CONFIG_``: sdkconfig ignores it, so it does nothing (upstream ships some)."""

    location: str
    variant: str
    line: str

    def __str__(self) -> str:
        return (f"{self.location}: warning: {self.variant}: '{self.line}' has no CONFIG_ prefix, so the build "
                f"ignores it; move it under sdkconfig (it becomes CONFIG_{self.line}) or remove it")


def variant_fragment(variant: Any) -> list[str]:
    """The board part of a variant's defaults fragment: resolved board symbol line + ``sdkconfig_append``.

    Built by the build's own fragment writer (``xzbuild.sdkconfig.board_lines``, upstream §6), so the check
    sees exactly the board lines a build passes to idf.py; user options are not part of a board file.
    """
    if variant.kconfig is None:
        return list(variant.sdkconfig_append)
    from xzbuild.sdkconfig.fragment import board_lines

    return board_lines(variant)[1]


# The two lines the model adds to the ESP32-P4 (rev < 3) twin of a ``p4x`` pair.
P4_LINES = ("CONFIG_ESP32P4_SELECTS_REV_LESS_V3=y", "CONFIG_ESP32P4_REV_MIN_100=y")


def _line_location(variant: Any, line: str) -> str:
    if variant.chip_variant == "p4" and line in P4_LINES:
        return str(variant.location("p4x"))
    key = line.split("=", 1)[0].removeprefix("CONFIG_")
    return str(variant.location(f"sdkconfig.{key}"))


def check_fragments(board_set: Any, firmware: Path,
                    kconfig_text: str | None = None) -> list[FragmentWarning | UnprefixedWarning]:
    """Every variant's fragment lines that the firmware Kconfig (or ``kconfig_text``) would drop, and the
    lines without ``CONFIG_`` that the build ignores."""
    text = kconfig_text if kconfig_text is not None else (firmware / "main/Kconfig.projbuild").read_text(encoding="utf-8")
    warnings: list[FragmentWarning | UnprefixedWarning] = []
    with KconfigEvaluator(text, firmware) as evaluator:
        for variant in board_set.variants():
            unprefixed = [line for line in variant.sdkconfig_append if not line.startswith("CONFIG_")]
            warnings += [UnprefixedWarning(str(variant.location(f"sdkconfig_unprefixed.{i}")), variant.name, line)
                         for i, line in enumerate(unprefixed)]
            fragment = variant_fragment(variant)
            for dropped in evaluator.evaluate(variant.target, fragment).dropped:
                warnings.append(
                    FragmentWarning(_line_location(variant, dropped.line), variant.name, variant.target,
                                    dropped.line, dropped.resolved)
                )
    return warnings
