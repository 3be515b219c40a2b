"""Natural label order for the Kconfig ``choice BOARD_TYPE`` entries (upstream conventions §4)."""

from __future__ import annotations

import re
from decimal import Decimal

# A trailing parenthetical that holds a CJK character, with the whitespace before it.
_CJK_SUFFIX = re.compile(r"\s+\([^)]*[\u3400-\u9fff][^)]*\)$")
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")

NaturalKey = tuple[tuple[int, Decimal | str], ...]


def natural_label_key(label: str) -> NaturalKey:
    """Sort key for a board label: case-folded, CJK suffix dropped, number runs compared as decimals.

    ``re.split`` alternates text (even index, possibly empty) and number runs, so equal positions always
    hold the same kind; the leading tag keeps the comparison well defined anyway. Decimals rather than
    floats so ``1.10`` and ``1.1`` compare exactly as written.
    """
    text = _CJK_SUFFIX.sub("", label.casefold())
    return tuple(
        (1, Decimal(run)) if i % 2 else (0, run) for i, run in enumerate(_NUMBER.split(text))
    )


def sort_labels_naturally(labels: list[str]) -> list[str]:
    """Labels in natural order; exact ties fall back to the plain string so the order is total."""
    return sorted(labels, key=lambda label: (natural_label_key(label), label))
