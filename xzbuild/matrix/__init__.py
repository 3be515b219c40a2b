"""The release matrix: variants per IDF version, change-based selection, sharding, CI matrices.

Public API for other stages::

    from xzbuild.matrix import list_variants, apply_shard, select_variants, MatrixEntry, Status
"""

from xzbuild.matrix.entries import DEFAULT_IDF, MatrixEntry, Status, list_variants, normalize_idf
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


def __getattr__(name: str) -> object:
    # Selection pulls in difflib/yaml/subprocess; load it only when asked for.
    if name == "select_variants":
        from xzbuild.matrix.select import select_variants

        return select_variants
    raise AttributeError(name)
