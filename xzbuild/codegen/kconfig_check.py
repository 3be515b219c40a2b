"""Warnings for a board set's variant fragments: the lines the firmware's Kconfig drops, and the lines without
``CONFIG_`` the build ignores.

Upstream never validates a variant's ``sdkconfig_append``: a line whose dependencies fail on the target
(``m5stack/stick-s3`` enables ``USE_ESP_WAKE_WORD`` on an ESP32-S3) is silently dropped by Kconfig. Each
variant's board lines are evaluated with ``xzbuild.sdkconfig.evaluate.KconfigEvaluator`` (the firmware's
``main/Kconfig.projbuild`` on esp-idf-kconfig, ESP-IDF's own symbols stubbed) and every line that names a
firmware symbol is compared with the value Kconfig settles on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xzbuild.sdkconfig.evaluate import KconfigEvaluator
from xzbuild.sdkconfig.fragment import board_lines


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
