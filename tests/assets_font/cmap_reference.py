"""Test judge: lv_font_conv's cmap subtable split, transcribed as the reference states it (O(N²)), to
cross-check the product's linear ``assets_gen.font.cmap_plan.plan_subtables``. Imports nothing from the product."""

from __future__ import annotations

from collections.abc import Sequence

# LVGL cmap types (lv_font_fmt_txt.h): the numbers the cbin files store.
FORMAT0_FULL = 0
FORMAT0_TINY = 2
SPARSE_TINY = 3


def plan_subtables_reference(codes: Sequence[int]) -> list[tuple[int, int, int]]:
    """The reference's quadratic dynamic program as ``cmap_build_subtables.js`` states it (strictly cheaper wins)."""
    n = len(codes)
    best: list[tuple[int, int, int]] = []  # (dist, start, format)
    for i in range(n):
        cur: tuple[float, int, int] = (float("inf"), 0, 0)
        for j in range(i + 1):
            prev = best[j - 1][0] if j else 0
            d = codes[i] - codes[j]
            if d < 256 and prev + 16 + d + 1 < cur[0]:
                cur = (prev + 16 + d + 1, j, FORMAT0_FULL)
            if d < 256 and codes[i] - i == codes[j] - j and prev + 16 < cur[0]:
                cur = (prev + 16, j, FORMAT0_TINY)
            if d < 65536 and prev + 16 + 2 * (i - j + 1) < cur[0]:
                cur = (prev + 16 + 2 * (i - j + 1), j, SPARSE_TINY)
        best.append((int(cur[0]), cur[1], cur[2]))
    out = []
    i = n - 1
    while i >= 0:
        _, j, fmt = best[i]
        out.append((fmt, j, i))
        i = j - 1
    out.reverse()
    return out
