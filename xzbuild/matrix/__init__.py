"""The release matrix: variants per IDF version, change-based selection, sharding, CI matrices.

Public API for other stages::

    from xzbuild.matrix import list_variants, apply_shard, select_variants, MatrixEntry, Status
"""

from typing import TYPE_CHECKING

from xzbuild.matrix.entries import DEFAULT_IDF, MatrixEntry, Status, list_variants, normalize_idf

if TYPE_CHECKING:
    from xzbuild.matrix.select import select_variants
    from xzbuild.matrix.shard import CostModel, apply_shard, parse_shard, partition

__all__ = [
    "DEFAULT_IDF",
    "CostModel",
    "MatrixEntry",
    "Status",
    "apply_shard",
    "list_variants",
    "normalize_idf",
    "parse_shard",
    "partition",
    "select_variants",
]


_LAZY = {"select_variants": "select", "CostModel": "shard", "apply_shard": "shard", "parse_shard": "shard",
         "partition": "shard"}


def __getattr__(name: str) -> object:
    # Selection (difflib/yaml/subprocess) and sharding load only when asked for: `matrix list` needs neither.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"xzbuild.matrix.{_LAZY[name]}"), name)
    raise AttributeError(name)
