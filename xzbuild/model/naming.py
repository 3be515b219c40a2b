"""Identity rules from upstream build.py: release names, Kconfig symbol resolution, label order."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from decimal import Decimal

# Names become directory names, command-line words and URL parts: never '.' or '-' first ('..', '.hidden',
# '--flag'), and ``\Z`` rather than ``$`` so a trailing newline does not match.
IDENT_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*\Z")
MANUFACTURER_RE = re.compile(r"^[a-z0-9][a-z0-9-]*\Z")
TEXT_FONT_RE = re.compile(r"^font_noto_sans_basic_([0-9]+)_([0-9]+)\Z")
ICON_FONT_RE = re.compile(r"^font_material_symbols_([0-9]+)_([0-9]+)\Z")
SYMBOL_RE = re.compile(r"^BOARD_TYPE_[A-Za-z0-9_]+\Z")
# A board dir as the firmware accepts it (CMake globs ``boards/${BOARD_DIR}/*.cc``): any case, '_' and '.'.
FIRMWARE_DIR_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
CJK = "\u3400-\u9fff"
LABEL_RE = re.compile(rf"^[^{CJK}]+(\([^)]*[{CJK}][^)]*\))?\Z")
STALE_LABEL_WORDS = ("ALIENTEK", "AMOLOED", "AIPI-Lite", "NOLOGO", "NULLLAB-AI-VOX3", "StopWatch",
                     "electronBot", "ottoRobot")
TARGETS = ("esp32", "esp32c3", "esp32c5", "esp32c6", "esp32s3", "esp32p4", "esp32s31")


def board_file_key(board_dir: str) -> str:
    """The board file a firmware dir is kept in, without ``.yaml``: each component lower-cased, any other
    character than ``[a-z0-9_.-]`` as ``-`` (``EnglishTeacher`` → ``englishteacher``). Equal to the dir for
    every dir named as board files are (the board file then needs no ``dir:`` key)."""
    parts = []
    for part in board_dir.split("/"):
        key = re.sub(r"[^a-z0-9_.-]", "-", part.lower())
        parts.append(re.sub(r"^[^a-z0-9]+", "", key) or "-")
    return "/".join(parts)


def normalize_p4x(name: str) -> str:
    """Upstream ``_normalize_p4x_release_name``: ``x-p4-y-p4x`` → ``x-p4x-y``."""
    if name.endswith("-p4x"):
        base = name[: -len("-p4x")]
        if "-p4-" in base:
            return base.replace("-p4-", "-p4x-", 1)
    return name


def full_name(name: str, manufacturer: str | None) -> str:
    """Upstream ``_get_full_name``: add ``<manufacturer>-`` unless absent or already there."""
    name = normalize_p4x(name)
    if not manufacturer or name.startswith(f"{manufacturer}-"):
        return name
    return f"{manufacturer}-{name}"


def symbol_from_name(name: str) -> str:
    """Step 3 of upstream resolution: ``BOARD_TYPE_`` + the upper-cased name with runs of non-alnum as ``_``."""
    return "BOARD_TYPE_" + re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")


def resolve_symbol(
    name: str,
    target: str,
    explicit: Sequence[str],
    candidates: Sequence[tuple[str, str]],
    known: set[str],
) -> tuple[str | None, str | None]:
    """Upstream ``_resolve_board_config``: returns (symbol, problem).

    ``explicit`` are the ``BOARD_TYPE_X`` symbols set ``=y`` in the fragment; ``candidates`` are
    (symbol, target) pairs of the chain branches pointing at the board dir, in chain order;
    ``known`` is every Kconfig symbol. ``problem`` is an error text (symbol None) or a warning.
    """
    distinct = list(dict.fromkeys(explicit))
    if len(distinct) > 1:
        return None, f"more than one explicit board symbol: {', '.join(distinct)}; keep one"
    if distinct and distinct[0] in known:
        return distinct[0], None
    if not candidates:
        return None, "no Kconfig BOARD_TYPE symbol points at this board dir; add a kconfig entry"
    if len(candidates) == 1:
        return candidates[0][0], None
    by_name = symbol_from_name(name)
    if any(sym == by_name for sym, _ in candidates):
        return by_name, None
    same_target = [sym for sym, t in candidates if t == target]
    if same_target:
        warn = f"ambiguous board config, selecting first ({same_target[0]})" if len(same_target) > 1 else None
        return same_target[0], warn
    upper = target.upper()
    short = "_" + upper.replace("ESP32", "", 1)
    for sym, _ in candidates:
        if upper in sym or (short != "_" and short in sym):
            return sym, None
    return candidates[0][0], f"cannot tell which board symbol to use, selecting first ({candidates[0][0]})"


# The rule of upstream's scripts/tests/test_build.py: a trailing parenthetical holding a CJK character,
# with the whitespace before it, does not count.
_CJK_SUFFIX = re.compile(rf"\s+\([^)]*[{CJK}][^)]*\)$")
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")

NaturalKey = tuple[tuple[int, "Decimal | str"], ...]


def natural_label_key(label: str) -> NaturalKey:
    """Natural order of BOARD_TYPE labels: case-folded, CJK suffix dropped, number runs compared as decimals.

    The one implementation of the rule: the validator and the Kconfig generator both sort with it.
    ``re.split`` alternates text (even index, possibly empty) and number runs, so equal positions always hold
    the same kind; the leading tag keeps the comparison well defined anyway. Decimals rather than floats so
    ``1.10`` and ``1.1`` compare exactly as written.
    """
    from decimal import Decimal  # only the label-order rule needs it; keeps `matrix list` startup small

    text = _CJK_SUFFIX.sub("", label.casefold())
    return tuple((1, Decimal(run)) if i % 2 else (0, run) for i, run in enumerate(_NUMBER.split(text)))
