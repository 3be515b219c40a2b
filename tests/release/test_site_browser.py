"""The release site in Debian's chromium: clean page loads, Install buttons that ESP Web Tools can follow,
search, accessibility, screenshots for the docs, and the 174-variant size and load-time budget (slow)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from tests.builder.firmware import REPO
from tests.release import browser as br
from tests.release.factory import build_release, site_args
from xzbuild.cli.main import main
from xzbuild.core.fsutil import write_if_changed

DOCS = REPO / "docs"


@pytest.fixture(scope="module")
def site(small_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    assert main(site_args(small_dist, out)) == 0
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[br.Served]:
    with br.serve(site) as served:
        yield served


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with br.chromium() as browser:
        yield browser


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    yield page
    context.close()


def pages_of(site: Path) -> list[str]:
    return ["index.html", *sorted(p.relative_to(site).as_posix() for p in (site / "boards").glob("*.html"))]


def test_every_page_loads_without_errors(site: Path, served: br.Served, page: Any) -> None:
    loads = {}
    for rel in pages_of(site):
        visit = page.context.new_page()
        log = br.watch(visit)
        visit.goto(served.base + rel, wait_until="load")
        if rel.startswith("boards/"):  # the bundled installer ran and upgraded the buttons
            visit.wait_for_function("customElements.get('esp-web-install-button') !== undefined")
        visit.wait_for_load_state("networkidle")
        loads[rel] = br.load_ms(visit)
        visit.close()
        assert log.problems == [], f"{rel}: {log.problems}"
    bad = [(path, code) for path, code in served.requests if code >= 400]
    assert bad == []
    slowest = max(loads, key=loads.__getitem__)
    br.TIMINGS.append(f"small release: {len(loads)} pages, index load {loads['index.html']:.0f} ms, "
                   f"slowest {slowest} {loads[slowest]:.0f} ms")


def _flasher_offsets(variant_dir: Path) -> dict[str, int]:
    """File → offset from ESP-IDF's flasher_args.json (the build's own statement), the merged image at 0."""
    args = json.loads((variant_dir / "flasher_args.json").read_text())
    offsets = {file: int(offset, 16) for offset, file in args["flash_files"].items()}
    offsets["merged-binary.bin"] = 0
    return offsets


def test_every_install_button_manifest_is_one_esp_web_tools_can_flash(site: Path, small_dist: Path,
                                                                     served: br.Served, page: Any) -> None:
    families = br.chip_families()
    br.check_url_resolution()
    seen: dict[str, set[str]] = {}
    for rel in pages_of(site)[1:]:
        page.goto(served.base + rel, wait_until="load")
        buttons = page.eval_on_selector_all(
            "esp-web-install-button", "els => els.map(e => [e.getAttribute('manifest'), e.dataset.kind, "
            "e.dataset.variant])")
        for manifest_path, kind, variant in buttons:
            got = page.evaluate(br.FETCH_AS_INSTALLER, manifest_path)
            assert got["ok"], got["manifestURL"]
            vdir = small_dist / variant
            chip = json.loads((vdir / "flasher_args.json").read_text())["extra_esptool_args"]["chip"]
            stated = {f["path"]: f for f in json.loads((vdir / "release.json").read_text())["files"]}
            offsets = _flasher_offsets(vdir)
            assert len(got["builds"]) >= 1
            for build in got["builds"]:
                assert build["chipFamily"] in families
                assert build["chipFamily"] == br.detected_chip_name(chip)
                for part in build["parts"]:
                    assert part["ok"], part["url"]
                    dist_path = urlparse(part["url"]).path.split("/fw/", 1)[1]
                    assert part["sha256"] == hashlib.sha256((small_dist / dist_path).read_bytes()).hexdigest()
                    assert part["sha256"] == stated[dist_path]["sha256"]
                    assert part["offset"] == offsets[Path(dist_path).relative_to(variant).as_posix()]
            if kind == "factory":  # writes the whole image (merged at 0) or at least the app at its slot
                written = {Path(p["path"]).name for b in got["builds"] for p in b["parts"]}
                assert "merged-binary.bin" in written or "xiaozhi.bin" in written, written
            else:  # an update must ask before erasing (install-dialog.ts, _renderDashboardNoImprov)
                assert got["manifest"].get("new_install_prompt_erase") is True
            seen.setdefault(kind, set()).add(variant)
    released = {p.parent.name for p in small_dist.glob("*/release.json")}
    assert seen["factory"] == released
    for variant in released - seen.get("update", set()):  # no update button only where the manifest would wipe
        raw = json.loads((small_dist / variant / "webtools-update.json").read_text())
        assert raw.get("new_install_prompt_erase") is not True


def test_pressing_install_loads_the_bundled_installer(site: Path, served: br.Served, page: Any) -> None:
    """The dialog code is imported on click (src/connect.ts line 4); it must come from the site, whole."""
    log = br.watch(page)
    page.goto(served.base + "boards/espressif-esp32-p4-function-ev-board.html", wait_until="load")
    page.wait_for_function("customElements.get('esp-web-install-button') !== undefined")
    br._source("src/connect.ts", ['import("./install-dialog.js")'])
    before = len(served.requests)
    page.check(".revision-picker input[value=p4x]")
    page.click("#espressif-esp32-p4x-function-ev-board esp-web-install-button[data-kind=factory] button")
    page.wait_for_function("customElements.get('ewt-install-dialog') !== undefined")
    fetched = [path for path, _ in served.requests[before:]]
    assert any(path.startswith("/static/esp-web-tools/install-dialog-") for path in fetched), fetched
    assert log.problems == []


def _visible_installs(page: Any) -> list[str]:
    return sorted(page.eval_on_selector_all(
        "esp-web-install-button", "els => els.filter(e => e.checkVisibility()).map(e => e.dataset.variant)"))


def test_p4_buttons_wait_for_the_chip_revision(served: br.Served, page: Any) -> None:
    p4, p4x = "espressif-esp32-p4-function-ev-board", "espressif-esp32-p4x-function-ev-board"
    page.goto(served.base + f"boards/{p4}.html", wait_until="load")
    page.wait_for_function("customElements.get('esp-web-install-button') !== undefined")
    assert _visible_installs(page) == []
    assert page.is_visible(f"#{p4} .revision-gate") and page.is_visible(f"#{p4x} .revision-gate")
    page.check(".revision-picker input[value=p4x]")
    assert set(_visible_installs(page)) == {p4x}
    assert "Not for your chip" in page.inner_text(f"#{p4} .revision-gate")
    page.check(".revision-picker input[value=p4]")
    assert set(_visible_installs(page)) == {p4}


def _codec_boards() -> set[str]:
    """Full names of the small release whose board constructs an ES8311 codec (the board file's
    ``source_facts.codec``, imported from the board's C++ source; tests/release/test_site_facts.py judges that
    fact against the firmware itself)."""
    out = set()
    for variant, board in (("waveshare-esp32-c6-touch-amoled-2.06", "waveshare/esp32-c6-touch-amoled-2.06.yaml"),
                           ("espressif-esp32-p4-function-ev-board", "espressif/esp32-p4-function-ev-board.yaml"),
                           ("espressif-esp32-p4x-function-ev-board", "espressif/esp32-p4-function-ev-board.yaml"),
                           ("bread-compact-wifi", "bread-compact-wifi.yaml"),
                           ("bread-compact-esp32", "bread-compact-esp32.yaml")):
        facts = yaml.safe_load((REPO / "boards" / board).read_text()).get("source_facts", {})
        if "ES8311" in str(facts.get("codec", "")).upper():
            out.add(variant)
    return out


SEARCHES = [
    ("name", "amoled", None, {"waveshare-esp32-c6-touch-amoled-2.06"}),
    ("chip", "esp32-c6", None, {"waveshare-esp32-c6-touch-amoled-2.06"}),
    ("chip-select", "", "P4X rev ≥ v3", {"espressif-esp32-p4x-function-ev-board"}),
    ("codec", "es8311", None, None),  # expected: from the board files
    ("two-words", "bread 128x64", None, {"bread-compact-wifi-128x64"}),
    ("nothing", "no-such-board", None, set()),
]


@pytest.mark.parametrize(("case", "query", "chip", "expected"), SEARCHES, ids=[s[0] for s in SEARCHES])
def test_search_finds_a_board_by_name_chip_and_codec(served: br.Served, page: Any, case: str, query: str,
                                                     chip: str | None, expected: set[str] | None) -> None:
    page.goto(served.base + "index.html", wait_until="load")
    start = time.perf_counter()
    if chip:
        page.select_option("#chip", chip)
    page.fill("#q", query)
    want = _codec_boards() if expected is None else expected
    page.wait_for_function(f"document.getElementById('count').textContent.startsWith('{len(want)} of')")
    took = (time.perf_counter() - start) * 1000
    assert set(br.visible_rows(page)) == want
    assert page.is_visible("#empty") == (not want)
    if case == "codec":
        in_page = page.evaluate(br.TIME_SEARCH, query)
        br.TIMINGS.append(f"small release: search {query!r} -> {len(want)} rows: {in_page:.1f} ms in the page, "
                          f"{took:.0f} ms through Playwright (fill until the count updates)")


def test_no_critical_accessibility_violations(site: Path, served: br.Served, page: Any) -> None:
    counts = {}
    for rel in ["index.html", "boards/espressif-esp32-p4-function-ev-board.html"]:
        page.goto(served.base + rel, wait_until="load")
        page.add_script_tag(path=str(br.AXE))
        result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        critical = [(v["id"], v["help"]) for v in result["violations"] if v["impact"] == "critical"]
        assert critical == [], f"{rel}: {critical}"
        counts[rel] = sorted(f"{v['impact']}:{v['id']}" for v in result["violations"])
    br.TIMINGS.append(f"axe-core: no critical violations; others: {counts}")


def test_screenshots_for_the_docs(served: br.Served, page: Any) -> None:
    page.goto(served.base + "index.html", wait_until="networkidle")
    catalog = page.screenshot(full_page=True)
    page.goto(served.base + "boards/espressif-esp32-p4-function-ev-board.html", wait_until="networkidle")
    page.check(".revision-picker input[value=p4x]")
    board = page.screenshot(clip={"x": 0, "y": 0, "width": 1280, "height": 1100}, full_page=True)
    for name, data in (("release-site-catalog.png", catalog), ("release-site-board.png", board)):
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        write_if_changed(DOCS / name, data)
    assert (DOCS / "release-site-catalog.png").stat().st_size > 10_000


#: The third-party flasher bundles the site serves as their npm packages ship them (ESP Web Tools, esptool-js).
VENDORED = ("static/esp-web-tools/", "static/esptool-js/")


def _text_bytes(site: Path) -> tuple[int, int]:
    """HTML + JS + CSS of the site, excluding firmware and images: (the site's own, the vendored flashers')."""
    own = vendored = 0
    for p in site.rglob("*"):
        rel = p.relative_to(site).as_posix()
        if p.is_file() and p.suffix in (".html", ".js", ".css") and not rel.startswith("fw/"):
            if rel.startswith(VENDORED):
                vendored += p.stat().st_size
            else:
                own += p.stat().st_size
    return own, vendored


@pytest.mark.slow
@pytest.mark.timeout(1800)  # builds all 174 variants with the stand-in first
def test_full_release_catalog_fits_the_size_budget_and_loads_clean(tmp_path: Path, chromium: Any) -> None:
    start = time.perf_counter()
    dist = build_release(tmp_path, None)
    built = time.perf_counter() - start
    count = len(list(dist.glob("*/release.json")))
    results = [json.loads(line) for line in (dist / "results.jsonl").read_text().splitlines() if line.strip()]
    enabled = [r for r in results if r["status"] != "disabled"]
    assert len(enabled) == 174  # every variant at IDF 6.0.2 (spec: upstream-conventions.md)
    assert count == sum(r["status"] in ("built", "cached") for r in results) >= 160
    start = time.perf_counter()
    assert main(site_args(dist, tmp_path / "site")) == 0
    rendered = time.perf_counter() - start
    size, vendored = _text_bytes(tmp_path / "site")
    # budgets (docs/release-site.md): the site's own pages and scripts grow with the catalog, the pinned flasher
    # bundles do not; each has its own
    assert size <= 2_000_000, f"{size} bytes of the site's own HTML/JS/CSS"
    assert vendored <= 1_000_000, f"{vendored} bytes of vendored flasher JS"
    with br.serve(tmp_path / "site") as served:
        page = chromium.new_page()
        log = br.watch(page)
        page.goto(served.base + "index.html", wait_until="load")
        first = br.load_ms(page)
        page.reload(wait_until="load")
        again = br.load_ms(page)
        assert log.problems == []
        rows = page.eval_on_selector_all("#catalog tbody tr", "els => els.length")
        assert rows == count
        took = page.evaluate(br.TIME_SEARCH, "es8311")
        page.close()
    # The 1 s budget is judged by bench/release_site.py (medians, a reference page in the same browser); a timed
    # assertion here would fail on a loaded machine for reasons that are not the site's.
    br.TIMINGS.append(f"{count} of 174 variants released: build {built:.0f} s, site {rendered:.1f} s, HTML/JS/CSS {size / 1e6:.2f} MB "
                   f"own + {vendored / 1e6:.2f} MB vendored flashers, "
                   f"index load {first:.0f} ms (reload {again:.0f} ms), search {took:.1f} ms in page")
