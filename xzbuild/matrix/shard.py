"""Split a variant list into N cost-balanced shards (`--shard i/N`), independent of input order.

Every command that processes a list of variants (build, assets, hil...) shards through `apply_shard`, so a
CI job `i/N` of one command sees exactly the variants job `i/N` of another command sees for the same list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from xzbuild.core.errors import Location, UserError
from xzbuild.core.fsutil import read_user_text

# Relative build cost per target, measured as "how long a clean idf.py build takes" relative to an esp32s3
# build. Only the ratios matter; a history file replaces them with real durations.
TARGET_WEIGHTS: dict[str, float] = {
    "esp32": 0.8,
    "esp32c3": 0.7,
    "esp32c5": 0.8,
    "esp32c6": 0.8,
    "esp32s3": 1.0,
    "esp32p4": 1.3,
    "esp32s31": 1.3,
}
DEFAULT_WEIGHT = 1.0

_SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shardable(Protocol):
    """Anything with a unique release name and a target (MatrixEntry, build results, ...)."""

    @property
    def full_name(self) -> str: ...

    @property
    def target(self) -> str: ...


T = TypeVar("T", bound=Shardable)


@dataclass(frozen=True)
class ShardSpec:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


#: The most shards a matrix is split into (GitHub Actions allows 256 jobs per matrix; beyond a few thousand the
#: per-shard lists only cost memory).
MAX_SHARDS = 4096


def parse_shard(text: str) -> ShardSpec:
    """Parse ``"i/N"`` (1 <= i <= N); raise UserError with the fix otherwise."""
    match = _SHARD_RE.match(text)
    if not match:
        raise UserError(f"--shard {text!r}: expected i/N, for example 2/8")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise UserError(f"--shard {text!r}: i must be between 1 and N (N >= 1)")
    if count > MAX_SHARDS:
        raise UserError(f"--shard {text!r}: N must be at most {MAX_SHARDS} (one shard per CI job)")
    return ShardSpec(index, count)


@dataclass
class CostModel:
    """Estimated build cost of a variant: measured seconds from history when known, else a target weight.

    Variants missing from the history are costed from the median measured time of their target (or of all
    measured variants, scaled by the target weight) so mixed known/unknown lists still balance.
    """

    history: dict[str, float] = field(default_factory=dict)
    targets: dict[str, str] = field(default_factory=dict)  # full_name -> target, for history medians

    def cost(self, entry: Shardable) -> float:
        """The cost of one entry (positive)."""
        if entry.full_name in self.history:
            return self.history[entry.full_name]
        weight = TARGET_WEIGHTS.get(entry.target, DEFAULT_WEIGHT)
        if not self.history:
            return weight
        from statistics import median  # imported here: only history-based costs need it

        same_target = [s for n, s in self.history.items() if self.targets.get(n) == entry.target]
        if same_target:
            return median(same_target)
        return median(self.history.values()) * weight

    @classmethod
    def from_file(cls, path: Path | None) -> CostModel:
        """Load a history file (see `load_history`); None or a missing file gives the target-only model."""
        if path is None or not path.is_file():
            return cls()
        history, targets = load_history(path)
        return cls(history, targets)


def load_history(path: Path) -> tuple[dict[str, float], dict[str, str]]:
    """Read build durations: a JSON object ``{full_name: seconds}``, or a JSON list / JSON-lines file of
    build results (`matrix build`'s results.jsonl: ``full_name``, ``seconds``, ``target``). Later records win."""
    from xzbuild.core.jsonread import JsonProblem, loads, read_jsonl

    text = read_user_text(path)
    records: list[object]
    try:
        data = loads(text) if text.strip() else {}
        records = data if isinstance(data, list) else [data]
    except JsonProblem:
        records = [record for _where, record in read_jsonl(path, "expected JSON lines of build results")]
    history: dict[str, float] = {}
    targets: dict[str, str] = {}
    for record in records:
        if not isinstance(record, dict):
            raise UserError("expected build-result objects or a {full_name: seconds} map", Location(str(path)))
        if "full_name" in record:
            seconds = record.get("seconds", record.get("duration_s"))
            if record.get("status") == "cached":
                continue  # a cache hit says nothing about how long the build takes
            if isinstance(seconds, int | float) and seconds > 0:
                history[str(record["full_name"])] = float(seconds)
                if isinstance(record.get("target"), str):
                    targets[str(record["full_name"])] = record["target"]
        else:
            for name, seconds in record.items():
                if isinstance(seconds, int | float) and seconds > 0:
                    history[str(name)] = float(seconds)
    return history, targets


def partition(entries: Iterable[T], count: int, model: CostModel | None = None) -> list[list[T]]:
    """Split entries into `count` shards with near-equal total cost (longest-processing-time greedy).

    The assignment depends only on the set of entries (sorted by cost then name before assigning), so
    reordering the input never moves a variant to another shard. Each shard keeps the input order.
    """
    if count < 1:
        raise UserError(f"shard count must be >= 1, got {count}")
    model = model or CostModel()
    items = list(entries)
    ranked = sorted(range(len(items)), key=lambda i: (-model.cost(items[i]), items[i].full_name, items[i].target))
    loads = [0.0] * count
    owner: dict[int, int] = {}
    for i in ranked:
        shard = min(range(count), key=lambda s: (loads[s], s))
        owner[i] = shard
        loads[shard] += model.cost(items[i])
    shards: list[list[T]] = [[] for _ in range(count)]
    for i, item in enumerate(items):
        shards[owner[i]].append(item)
    return shards


def apply_shard(entries: Sequence[T], shard: str | ShardSpec | None, model: CostModel | None = None) -> list[T]:
    """The entries of shard ``"i/N"`` (all entries when `shard` is None), in input order."""
    if shard is None:
        return list(entries)
    spec = parse_shard(shard) if isinstance(shard, str) else shard
    return partition(entries, spec.count, model)[spec.index - 1]
