"""A real browser over a served site: Debian's chromium driven by Playwright, a loopback HTTP server, and the
facts of ESP Web Tools read from its own source in node_modules (never from xzbuild)."""

from __future__ import annotations

import functools
import http.server
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.release.factory import NPM, WEB_TOOLS

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
AXE = NPM / "axe-core" / "axe.min.js"
TIMINGS: list[str] = []
"""Lines the browser tests measured (page load, search); conftest prints them after the run."""


def _source(rel: str, must_contain: list[str]) -> str:
    """A file of the esp-web-tools package, checked to still say what the judge relies on."""
    text = (WEB_TOOLS / rel).read_text(encoding="utf-8")
    for needle in must_contain:
        assert needle in text, f"esp-web-tools {rel} no longer contains {needle!r}; re-read the installer"
    return text


def chip_families() -> set[str]:
    """`Build.chipFamily` in src/const.ts (lines 8-19 in 10.4.0): the names a manifest may use."""
    text = _source("src/const.ts", ["export interface Build {", "chipFamily:"])
    block = text[text.index("export interface Build {"):]
    block = block[block.index("chipFamily:"):block.index(";")]
    return set(re.findall(r'"([A-Z0-9-]+)"', block))


def detected_chip_name(esptool_chip: str) -> str:
    """What the installer compares chipFamily with: src/flash.ts line 81 takes `esploader.chip.CHIP_NAME`
    (lines 90-96 match `b.chipFamily === chipFamily`), set in esptool-js lib/targets/<chip>.js line 5."""
    _source("src/flash.ts", ["chipFamily = esploader.chip.CHIP_NAME", "b.chipFamily === chipFamily"])
    target = NPM / "esptool-js" / "lib" / "targets" / f"{esptool_chip}.js"
    match = re.search(r'this\.CHIP_NAME = "([^"]+)"', target.read_text(encoding="utf-8"))
    assert match, f"{target}: no CHIP_NAME"
    return match.group(1)


def check_url_resolution() -> None:
    """src/util/manifest.ts line 4 resolves the manifest against the page, src/flash.ts lines 115-120 each part
    against the manifest URL: the in-page fetch below does the same two `new URL` steps."""
    _source("src/util/manifest.ts", ["new URL(manifestPath, location.toString())", "await resp.json()"])
    _source("src/flash.ts", ["new URL(manifestPath, location.toString())", "new URL(part.path, manifestURL)"])


# Runs in the page: fetch the manifest and every part the way the installer does, hash the bytes.
FETCH_AS_INSTALLER = """async (manifestPath) => {
  const hex = (buf) => Array.from(new Uint8Array(buf)).map((b) => b.toString(16).padStart(2, "0")).join("");
  const manifestURL = new URL(manifestPath, location.toString()).toString();
  const resp = await fetch(manifestURL);
  const manifest = await resp.json();
  const builds = [];
  for (const build of manifest.builds) {
    const parts = [];
    for (const part of build.parts) {
      const url = new URL(part.path, manifestURL).toString();
      const r = await fetch(url);
      const buf = await r.arrayBuffer();
      parts.push({path: part.path, offset: part.offset, url, ok: r.ok, size: buf.byteLength,
                  sha256: hex(await crypto.subtle.digest("SHA-256", buf))});
    }
    builds.push({chipFamily: build.chipFamily, parts});
  }
  return {manifestURL, ok: resp.ok, manifest, builds};
}"""


# Runs in the page: the time the catalog's input handler takes to filter the table for a query.
TIME_SEARCH = """(query) => { const q = document.getElementById('q'); const t = performance.now();
  q.value = query; q.dispatchEvent(new Event('input')); return performance.now() - t; }"""


@dataclass
class Served:
    """A site on loopback and every request it answered."""

    base: str
    requests: list[tuple[str, int]] = field(default_factory=list)


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's chromium under Playwright with the flags this machine needs (no browser download)."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).is_file(), "Debian's chromium is missing: `make install` (as root) installs it"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def serve(root: Path) -> Iterator[Served]:
    """Serve ``root`` on 127.0.0.1 (a secure context for Web Serial and crypto.subtle) in a thread."""
    served = Served("")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            served.requests.append((self.path, int(code) if str(code).isdigit() else 0))

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (http.server's signature)
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    served.base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class PageLog:
    """Console errors, page errors, failed and 4xx/5xx requests of one page visit."""

    problems: list[str] = field(default_factory=list)


def watch(page: Any) -> PageLog:
    log = PageLog()
    page.on("console", lambda m: log.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: log.problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: log.problems.append(f"request failed: {r.url} {r.failure}"))
    page.on("response", lambda r: log.problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    return log


def load_ms(page: Any) -> float:
    """Navigation start to the end of the load event, from the browser's Navigation Timing entry."""
    return float(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))


def visible_rows(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("#catalog tbody tr:not([hidden]) td:first-child small",
                                          "els => els.map(e => e.textContent)"))
