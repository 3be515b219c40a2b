"""Split sorted code points into LVGL cmap subtables exactly as the reference converter does.

The reference runs an O(N²) dynamic program (``cmap_build_subtables.js``): for every end index i it tries
every start j ≤ i with three candidate formats and keeps a candidate only if it is *strictly* cheaper, so
ties go to the smallest j and, for one j, to FORMAT0_FULL, then FORMAT0_TINY, then SPARSE_TINY:

* FORMAT0_FULL  if cp[i] − cp[j] < 256:              prev(j) + 16 + (cp[i] − cp[j] + 1)
* FORMAT0_TINY  if cp[i] − cp[j] < 256 and the run j..i is contiguous: prev(j) + 16
* SPARSE_TINY   if cp[i] − cp[j] < 65536:            prev(j) + 16 + 2·(i − j + 1)

Each cost is ``(a term depending on j only) + (a term depending on i only)`` and each admissible j forms a
window whose lower end never moves left as i grows, so three monotonic deques give the same answer —
including the tie-breaking — in O(N).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

FORMAT0_FULL = 0
SPARSE_FULL = 1
FORMAT0_TINY = 2
SPARSE_TINY = 3



class _WindowMin:
    """Sliding-window minimum over (key, j); equal keys keep the earliest j at the front."""

    def __init__(self) -> None:
        self._q: deque[tuple[int, int]] = deque()

    def push(self, key: int, j: int) -> None:
        q = self._q
        while q and q[-1][0] > key:
            q.pop()
        q.append((key, j))

    def best(self, lo: int) -> tuple[int, int] | None:
        q = self._q
        while q and q[0][1] < lo:
            q.popleft()
        return q[0] if q else None


def plan_subtables(codes: Sequence[int]) -> list[tuple[int, int, int]]:
    """Return ``[(format, start_index, end_index_inclusive), ...]`` covering the sorted, unique ``codes``."""
    n = len(codes)
    dist = [0] * n
    choice: list[tuple[int, int]] = [(0, 0)] * n  # (format, start j)
    full, tiny, sparse = _WindowMin(), _WindowMin(), _WindowMin()
    lo256 = lo64k = run_start = 0
    for i in range(n):
        cp = codes[i]
        prev = dist[i - 1] if i else 0
        # Candidates starting at j = i become available now; prev(j) = dist[j-1].
        full.push(prev - cp, i)
        tiny.push(prev, i)
        sparse.push(prev - 2 * i, i)
        while cp - codes[lo256] >= 256:
            lo256 += 1
        while cp - codes[lo64k] >= 65536:
            lo64k += 1
        if i and cp - codes[i - 1] != 1:
            run_start = i
        cands: list[tuple[int, int, int, int]] = []  # (cost, j, order, format)
        b = full.best(lo256)
        if b is not None:
            cands.append((b[0] + 17 + cp, b[1], 0, FORMAT0_FULL))
        b = tiny.best(max(lo256, run_start))
        if b is not None:
            cands.append((b[0] + 16, b[1], 1, FORMAT0_TINY))
        b = sparse.best(lo64k)
        if b is not None:
            cands.append((b[0] + 18 + 2 * i, b[1], 2, SPARSE_TINY))
        cost, j, _, fmt = min(cands)
        dist[i] = cost
        choice[i] = (fmt, j)
    out: list[tuple[int, int, int]] = []
    i = n - 1
    while i >= 0:
        fmt, j = choice[i]
        out.append((fmt, j, i))
        i = j - 1
    out.reverse()
    return out
