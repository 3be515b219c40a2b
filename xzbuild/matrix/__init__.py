"""The release matrix: variants per IDF version, change-based selection, sharding, CI matrices.

Public API for other stages::

    from xzbuild.matrix import list_variants, apply_shard, select_variants, MatrixEntry, Status
"""

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the start-up fast path avoids importing typing (mypy knows the name)
if TYPE_CHECKING:
    from xzbuild.matrix.entries import DEFAULT_IDF, MatrixEntry, Status, list_variants, normalize_idf
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


_LAZY = {"DEFAULT_IDF": "entries", "MatrixEntry": "entries", "Status": "entries", "list_variants": "entries",
         "normalize_idf": "entries", "select_variants": "select", "CostModel": "shard", "apply_shard": "shard",
         "parse_shard": "shard", "partition": "shard"}


def __getattr__(name: str) -> object:
    # Each submodule loads when a name of it is asked for: the start-up fast path of `matrix list --json`
    # imports `xzbuild.matrix.cache` alone, and `matrix list` needs neither selection nor sharding.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"xzbuild.matrix.{_LAZY[name]}"), name)
    raise AttributeError(name)
