"""Release site: size and load time of the catalog for the full stand-in release, against the issue's budget.

Builds every variant at IDF 6.0.2 with tests/standin/idf.py (or reads --dist), writes the site, serves it on
loopback and opens it in Debian's chromium (Playwright) several times:

    size ratio = HTML+JS+CSS bytes / 2,000,000          target <= 1
    load ratio = median index.html load event / 1000 ms  target <  1   (first visit of a fresh page each run)
    vs. blank  = median index.html load / median load of a blank page from the same server, same browser
                 (the reference run: how much of the time is the catalog rather than the machine)
    search     = in-page time of one catalog query (ms)

Usage: .venv/bin/python bench/release_site.py [--dist DIR] [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SIZE_BUDGET = 2_000_000  # the site's own HTML/JS/CSS (grows with the catalog)
VENDORED_BUDGET = 1_000_000  # the pinned flasher bundles it serves (ESP Web Tools, esptool-js; docs/release-site.md)
VENDORED = ("static/esp-web-tools/", "static/esptool-js/")
LOAD_BUDGET_MS = 1000.0


def text_bytes(site: Path, vendored: bool = False) -> int:
    """HTML + JS + CSS, excluding firmware and images: the site's own, or (``vendored``) the flashers'."""
    return sum(p.stat().st_size for p in site.rglob("*") if p.is_file() and p.suffix in (".html", ".js", ".css")
               and not p.relative_to(site).as_posix().startswith("fw/")
               and p.relative_to(site).as_posix().startswith(VENDORED) == vendored)


def measure(site: Path, runs: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    from tests.release import browser as br

    boards = sorted((site / "boards").glob("*.html"), key=lambda p: p.stat().st_size)
    with br.serve(site) as served, sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=br.CHROMIUM, args=br.CHROMIUM_ARGS)
        index, board, search, blank = [], [], [], []
        for _ in range(runs):
            page = chromium.new_page()
            page.goto(served.base + "bench-blank.html", wait_until="load")
            blank.append(br.load_ms(page))
            page.goto(served.base + "index.html", wait_until="load")
            index.append(br.load_ms(page))
            search.append(float(page.evaluate(br.TIME_SEARCH, "es8311")))
            page.goto(served.base + boards[-1].relative_to(site).as_posix(), wait_until="load")
            board.append(br.load_ms(page))
            page.close()
        chromium.close()
    return {"index_ms": statistics.median(index), "blank_ms": statistics.median(blank),
            "largest_board_ms": statistics.median(board),
            "search_ms": statistics.median(search), "largest_board_bytes": boards[-1].stat().st_size}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=None, help="a `matrix build` output (default: build all)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from tests.release.factory import build_release, site_args
    from xzbuild.cli.main import main as xzbuild

    with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        dist = args.dist or build_release(root, None)
        built = time.perf_counter() - start
        start = time.perf_counter()
        if xzbuild(site_args(dist, root / "site")) != 0:
            return 1
        rendered = time.perf_counter() - start
        size = text_bytes(root / "site")
        vendored = text_bytes(root / "site", vendored=True)
        (root / "site" / "bench-blank.html").write_text("<!doctype html><title>blank</title>\n")
        result = {"variants": len(list(dist.glob("*/release.json"))), "build_s": round(built, 1),
                  "site_s": round(rendered, 2), "text_bytes": size, "size_ratio": round(size / SIZE_BUDGET, 3),
                  "vendored_bytes": vendored, "vendored_ratio": round(vendored / VENDORED_BUDGET, 3),
                  **measure(root / "site", args.runs)}
        result["load_ratio"] = round(result["index_ms"] / LOAD_BUDGET_MS, 3)
        result["vs_blank"] = round(result["index_ms"] / max(result["blank_ms"], 0.1), 2)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['variants']} variants (build {result['build_s']} s, site {result['site_s']} s)")
        print(f"HTML/JS/CSS {size / 1e6:.2f} MB  ratio to 2 MB budget {result['size_ratio']}; vendored flashers "
              f"{result['vendored_bytes'] / 1e6:.2f} MB  ratio to 1 MB budget {result['vendored_ratio']}")
        print(f"index.html load {result['index_ms']:.0f} ms (median of {args.runs})  ratio to 1 s "
              f"{result['load_ratio']}; {result['vs_blank']}x a blank page ({result['blank_ms']:.0f} ms); "
              f"largest board page {result['largest_board_ms']:.0f} ms; "
              f"search {result['search_ms']:.1f} ms in page")
    return 0 if result["size_ratio"] <= 1 and result["load_ratio"] < 1 else 1


if __name__ == "__main__":
    sys.exit(main())
