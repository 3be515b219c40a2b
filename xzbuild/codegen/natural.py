"""Natural label order for the Kconfig ``choice BOARD_TYPE`` entries (upstream conventions §4).

The sort key lives with the board model (``xzbuild.model.naming``), where the validator uses it too.
"""

from __future__ import annotations

from xzbuild.model.naming import NaturalKey, natural_label_key

__all__ = ["NaturalKey", "natural_label_key", "sort_labels_naturally"]


def sort_labels_naturally(labels: list[str]) -> list[str]:
    """Labels in natural order; exact ties fall back to the plain string so the order is total."""
    return sorted(labels, key=lambda label: (natural_label_key(label), label))
