"""GitHub Actions `include:` matrices for the release workflow, within GitHub's limits.

Each IDF version gets its own container image, so variants gated to a newer IDF (the ESP32-S31 boards)
land in ordinary matrix jobs. A variant is built with the first listed IDF version that supports it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from xzbuild.core.errors import UserError
from xzbuild.matrix.entries import MatrixEntry
from xzbuild.matrix.shard import CostModel, partition

MAX_JOBS = 256  # GitHub: a matrix may generate at most 256 jobs per workflow run
MAX_OUTPUT_BYTES = 1_000_000  # GitHub: job outputs are limited to 1 MB per job
IMAGE_TEMPLATE = "espressif/idf:v{idf}"
# The keys every include entry carries; release.yml reads exactly these (tests check both sides).
INCLUDE_KEYS = ("job", "idf", "image", "shard", "count", "cost", "targets", "preview", "variants")


@dataclass(frozen=True)
class Assignment:
    """Which IDF version builds which entries, and the entries no requested version supports."""

    by_idf: dict[str, list[MatrixEntry]]
    unbuildable: list[MatrixEntry]


def assign_idf(listings: dict[str, list[MatrixEntry]], only: set[str] | None = None) -> Assignment:
    """Give each variant to the first IDF version (in `listings` order) whose listing enables it.

    `listings` maps an IDF label (``"6.0.2"``) to `list_variants(...)` at that version; `only` limits the
    result to these full names (a selection).
    """
    taken: set[str] = set()
    by_idf: dict[str, list[MatrixEntry]] = {}
    everything: dict[str, MatrixEntry] = {}
    for idf, entries in listings.items():
        chosen = []
        for entry in entries:
            if only is not None and entry.full_name not in only:
                continue
            everything.setdefault(entry.full_name, entry)
            if entry.enabled and entry.full_name not in taken:
                taken.add(entry.full_name)
                chosen.append(entry)
        by_idf[idf] = chosen
    unbuildable = [e for name, e in sorted(everything.items()) if name not in taken]
    return Assignment(by_idf, unbuildable)


def _split_shards(by_idf: dict[str, list[MatrixEntry]], shards: int, model: CostModel) -> dict[str, int]:
    """Share `shards` jobs among IDF groups in proportion to their cost (each non-empty group gets >= 1)."""
    costs = {idf: sum(model.cost(e) for e in entries) for idf, entries in by_idf.items() if entries}
    if not costs:
        return {}
    if shards < len(costs):
        raise UserError(f"--shards {shards}: need at least {len(costs)} (one per IDF version with variants)")
    counts = {idf: 1 for idf in costs}
    for _ in range(shards - len(costs)):
        # Give the next job to the group with the highest cost per job; ties by IDF order.
        idf = max(costs, key=lambda i: (costs[i] / counts[i], -list(costs).index(i)))
        if counts[idf] >= len(by_idf[idf]):
            remaining = [i for i in costs if counts[i] < len(by_idf[i])]
            if not remaining:
                break
            idf = max(remaining, key=lambda i: costs[i] / counts[i])
        counts[idf] += 1
    return counts


def github_matrix(
    assignment: Assignment,
    shards: int | None = None,
    model: CostModel | None = None,
    image_template: str = IMAGE_TEMPLATE,
) -> dict[str, list[dict[str, object]]]:
    """The ``{"include": [...]}`` matrix: one job per variant, or `shards` cost-balanced jobs in total.

    Raises UserError if the result would break GitHub's 256-job or 1 MB output limits.
    """
    model = model or CostModel()
    include: list[dict[str, object]] = []
    if shards is None:
        for idf, entries in assignment.by_idf.items():
            for e in entries:
                include.append(_job(e.full_name, idf, image_template, "", [e], model))
    else:
        counts = _split_shards(assignment.by_idf, shards, model)
        for idf, count in counts.items():
            for index, part in enumerate(partition(assignment.by_idf[idf], count, model), 1):
                if part:
                    include.append(_job(f"idf{idf}-{index}of{count}", idf, image_template,
                                        f"{index}/{count}", part, model))
    if len(include) > MAX_JOBS:
        raise UserError(f"{len(include)} jobs exceed GitHub's {MAX_JOBS}-job matrix limit; use --shards N (N <= {MAX_JOBS})")
    matrix = {"include": include}
    size = len(dump(matrix).encode())
    if size > MAX_OUTPUT_BYTES:
        raise UserError(f"matrix JSON is {size} bytes, over GitHub's {MAX_OUTPUT_BYTES}-byte output limit; use --shards")
    return matrix


def _job(label: str, idf: str, template: str, shard: str, entries: Sequence[MatrixEntry],
         model: CostModel) -> dict[str, object]:
    return {
        "job": label,
        "idf": idf,
        "image": template.format(idf=idf),
        "shard": shard,
        "count": len(entries),
        "cost": round(sum(model.cost(e) for e in entries), 2),
        "targets": " ".join(sorted({e.target for e in entries})),
        "preview": any(e.preview for e in entries),
        "variants": " ".join(e.full_name for e in entries),
    }


def dump(matrix: dict[str, list[dict[str, object]]]) -> str:
    """Compact, deterministic JSON (what goes into `$GITHUB_OUTPUT`)."""
    return json.dumps(matrix, separators=(",", ":"), sort_keys=False)
