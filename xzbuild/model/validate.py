"""Cross-file and semantic rules (upstream §14 checklist plus hardware sanity)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xzbuild.errors import UserError

if TYPE_CHECKING:
    from xzbuild.model.loader import BoardSet


def validate_board_set(bs: BoardSet) -> list[UserError]:
    """Every rule violation in the set, one UserError each (file:line:col of the offending key)."""
    return []
