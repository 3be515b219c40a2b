"""Property, HTML sink: every board-file string the release site shows is either refused by `boards check`
(file:line:col naming the field) or round-trips — the page `xzbuild release site` writes, loaded in Debian's
chromium, shows exactly that value as the DOM text of the element that displays it, and the value adds no
element, attribute or script to the page.

Strings of the board model that reach the site's HTML (xzbuild/release/facts.py, templates/site): the Kconfig
label (catalog link, board page <title> and <h1>), the manufacturer (catalog column, board page lead, the
full-name prefix), the variant name (the full name: catalog, board page headings, ids and links) and
`source_facts.codec` (catalog column, board page "Audio codec"). Other facts on the page are looked up in fixed
tables (network, chip) or read from numbers (display size).

One site per batch: the accepted values of a batch each get a board of their own in one `boards/` tree, the site
is written once by `build_site` (what `release site` runs) from release records shaped as `matrix build` writes
them (xzbuild/builder/dist_artifacts.py; no firmware files: the board strings come from the model, not the record), and
all its pages are read in one browser page. Each batch also holds a board with plain values: every other page must
have its element and attribute structure (tag names, attribute names, scripts) exactly.
Default run: 2 derandomized batches of 8 values (4 hostile, 4 plausible) per field; with `-m slow`, 40 random
batches of 16.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.hostile import test_board_strings_property as prop
from tests.release import browser as br
from tests.release.factory import WEB_TOOLS

Setter = Callable[[dict[str, Any], str], None]


def board_number(i: int) -> dict[str, Any]:
    """The property test's base board, made distinct (type, Kconfig symbol, variant name) so many fit one tree."""
    board = prop.base_board()
    board["type"] = f"demo{i}"
    board["kconfig"][0]["symbol"] = f"BOARD_TYPE_DEMO{i}"
    board["kconfig"][0]["label"] = f"Demo Board {i}"
    board["variants"][0]["name"] = f"demo{i}"
    board["kconfig"][0]["target_default"] = i == 0  # one default board per target
    return board


def home(board: dict[str, Any]) -> str:
    """The manufacturer directory a board file sits in: its manufacturer (`boards check` requires the two to
    match) when that can name a directory the loader reads boards from, else ``acme``."""
    from xzbuild.model.loader import SKIPPED_DIRS

    value = board.get("manufacturer", "acme")
    usable = isinstance(value, str) and 0 < len(value.encode()) < 200 and not value.startswith((".", "_")) and \
        value not in SKIPPED_DIRS and value.isprintable() and "/" not in value
    return value if usable else "acme"


def write_tree(root: Path, boards: list[dict[str, Any]]) -> list[str]:
    """Board i as <home>/demo<i>.yaml; returns the board dirs."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "_firmware.yaml").write_text(prop.FACTS, encoding="utf-8")
    dirs = []
    for i, board in enumerate(boards):
        dirs.append(f"{home(board)}/demo{i}")
        (root / home(board)).mkdir(parents=True, exist_ok=True)
        (root / f"{dirs[-1]}.yaml").write_text(yaml.safe_dump(board, sort_keys=False, allow_unicode=True),
                                                     encoding="utf-8")
    return dirs


def refusal(board: dict[str, Any]) -> list[str]:
    """`boards check` on a tree holding only ``board`` (as <home>/demo0.yaml): its error lines, [] when
    accepted."""
    from xzbuild.core.errors import UserErrors
    from xzbuild.model import load_boards

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "boards"
        write_tree(root, [board])
        try:
            load_boards(root)
        except UserErrors as exc:
            return str(exc).splitlines()
    return []


def write_dist(dist: Path, boards_dir: Path) -> dict[str, str]:
    """A release record per variant of the tree, with the keys `matrix build` writes; {board dir: full name}."""
    from xzbuild.model import load_boards

    names = {}
    for variant in load_boards(boards_dir).variants():
        board_dir = variant.board.dir
        record = {"full_name": variant.full_name, "name": variant.name, "board": board_dir,
                  "target": variant.target, "chip_variant": variant.chip_variant, "app_version": "1.0.0",
                  "project_version": "1.0.0", "idf_version": "v6.0.2", "chip_revision": {"min": "v0.0", "max": "v99.99"},
                  "flash_settings": {"flash_size": "16MB"}, "app_size": 1000, "app_partition_size": 4000,
                  "files": [], "webtools": {}, "webtools_note": None}
        (dist / variant.full_name).mkdir(parents=True)
        (dist / variant.full_name / "release.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n",
                                                               encoding="utf-8")
        names[str(board_dir)] = variant.full_name
    return names


# Runs in a page: the text of the elements that show board strings, and the page's structure.
READ_PAGE = """() => {
  const text = (sel) => Array.from(document.querySelectorAll(sel), (e) => e.textContent);
  const dd = (label) => Array.from(document.querySelectorAll('dl.facts dt'))
    .filter((dt) => dt.textContent === label).map((dt) => dt.nextElementSibling.textContent);
  const rows = Array.from(document.querySelectorAll('#catalog tbody tr'), (tr) => ({
    name: tr.cells[0].querySelector('a').textContent, full: tr.cells[0].querySelector('small').textContent,
    manufacturer: tr.cells[1].textContent, codec: tr.cells[5].textContent,
    shape: Array.from(tr.querySelectorAll('*'), (e) => e.tagName + '[' + e.getAttributeNames().join(',') + ']')}));
  return {title: document.title, h1: text('h1'), h2: text('section.variant h2'), lead: text('p.lead'),
          codec: dd('Audio codec'), rows,
          ids: Array.from(document.querySelectorAll('section.variant'), (e) => e.id),
          scripts: Array.from(document.scripts, (s) => s.getAttribute('src') + '|' + s.text),
          shape: Array.from(document.querySelectorAll('*'), (e) => e.tagName + '[' + e.getAttributeNames().join(',') + ']')};
}"""


@pytest.fixture(scope="module", autouse=True)
def _write_stats() -> Iterator[None]:
    """XZ_PROPERTY_STATS=<file>: the counts of both property modules (one shared counter)."""
    yield
    target = os.environ.get("XZ_PROPERTY_STATS")
    if target:
        Path(target).write_text(json.dumps(prop.STATS, indent=1, sort_keys=True), encoding="utf-8")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with br.chromium() as browser:
        yield browser


def render_and_read(chromium: Any, boards: list[dict[str, Any]]) -> tuple[dict[str, str], dict[str, Any]]:
    """Write the site for ``boards`` (board i in <home>/demo<i>), read every page; ({board dir: full name},
    {page: what READ_PAGE returns})."""
    from xzbuild.release.site import SiteOptions, board_slug, build_site

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        dirs = write_tree(root / "boards", boards)
        names = write_dist(root / "dist", root / "boards")
        assert sorted(names) == sorted(dirs)
        build_site(SiteOptions(dist=root / "dist", out=root / "site", boards_dir=root / "boards",
                               web_tools=WEB_TOOLS, date="2026-12-01"))
        pages = ["index.html", *(f"boards/{board_slug(d)}.html" for d in names)]
        dialogs: list[str] = []
        read = {}
        with br.serve(root / "site") as served:
            # The page's own scripts stay off: the DOM is what the HTML parser made of the page, and a script or
            # handler a value might add shows up in the structure compared below without having to run.
            context = chromium.new_context(java_script_enabled=False)
            # Style sheets, images and scripts are not fetched: only the parsed documents are read.
            context.route("**/*", lambda route: route.continue_() if route.request.resource_type == "document"
                          else route.abort())
            page = context.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            for rel in pages:
                page.goto(served.base + rel, wait_until="domcontentloaded")
                read[rel] = page.evaluate(READ_PAGE)
            context.close()
        assert dialogs == []
    return names, read


def run_batch(chromium: Any, name: str, setter: Setter, field: str, values: list[str],
              shows: Callable[[str, dict[str, Any], dict[str, Any], str], None], plain: str,
              distinct: Callable[[str], Any]) -> None:
    values = [yaml.safe_load(yaml.safe_dump([v], allow_unicode=True))[0] for v in values]  # what the file holds
    accepted: list[str] = []
    seen = {distinct(plain)}
    for value in values:
        board = board_number(0)
        setter(board, value)
        refused = refusal(board)
        if refused:  # at file:line:col, naming the field
            where = re.compile(rf"{re.escape(home(board))}/demo0\.yaml:\d+:\d+: ")
            assert any(where.search(line) and field in line for line in refused), refused
        elif distinct(value) not in seen:  # one site holds boards that differ where the tree requires it
            seen.add(distinct(value))
            accepted.append(value)
        prop.STATS[f"html-{name}:{'refused' if refused else 'round-tripped'}"] += 1
    if not accepted:
        return
    boards = [board_number(0)]
    setter(boards[0], plain)
    for i, value in enumerate(accepted, 1):
        boards.append(board_number(i))
        setter(boards[-1], value)
    names, read = render_and_read(chromium, boards)
    index = read["index.html"]
    rows = {row["full"]: row for row in index["rows"]}
    from xzbuild.release.site import board_slug

    pages = [read[f"boards/{board_slug(d)}.html"] for d in sorted(names)]
    base = pages[0]
    for page in pages:  # no element, attribute or script came from a value
        assert page["shape"] == base["shape"] and page["scripts"] == base["scripts"]
    plain_row = rows[names[f"{home(boards[0])}/demo0"]]
    for row in index["rows"]:
        assert row["shape"] == plain_row["shape"]
    assert all(s.endswith("|") for s in index["scripts"]), index["scripts"]  # no inline script on the catalog
    for i, value in enumerate(accepted, 1):
        board_dir = f"{home(boards[i])}/demo{i}"
        full = names[board_dir]
        shows(value, rows[full], read[f"boards/{board_slug(board_dir)}.html"], full)


def shows_label(value: str, row: dict[str, Any], page: dict[str, Any], full: str) -> None:
    assert row["name"] == value
    # document.title strips and collapses ASCII whitespace (HTML, "document.title" getter); the h1 keeps it
    assert page["h1"] == [value] and page["title"] == re.sub("[\t\n\f\r ]+", " ", f"{value} · xiaozhi firmware").strip(" ")


def shows_manufacturer(value: str, row: dict[str, Any], page: dict[str, Any], full: str) -> None:
    assert row["manufacturer"] == value
    assert page["lead"][0].startswith(f"{value} · board ")


def shows_full_name(value: str, row: dict[str, Any], page: dict[str, Any], full: str) -> None:
    assert value in full  # upstream's naming adds the manufacturer prefix
    assert row["full"] == full and page["h2"] == [full] and page["ids"] == [full]


def shows_codec(value: str, row: dict[str, Any], page: dict[str, Any], full: str) -> None:
    shown = value or "—"  # an empty codec fact is no fact: the base board has no codec part, the page says "—"
    assert row["codec"] == shown and page["codec"] == [shown]


def source_codec(board: dict[str, Any], value: str) -> None:
    board["source_facts"] = {"codec": value}


def variant_name(board: dict[str, Any], value: str) -> None:
    board["variants"][0]["name"] = value


def label_key(value: str) -> Any:
    """Labels one tree may not hold together (`boards check` refuses labels that sort equal)."""
    from xzbuild.model.validate import natural_label_key

    return natural_label_key(value)


def full_name_of(value: str) -> str:
    """Variant names one tree may not hold together (same full name)."""
    from xzbuild.model.naming import full_name

    return full_name(value, "acme")


# (id, setter, the field in errors, a plausible valid value, what the page must show, the plain board's value,
#  which values cannot share one tree)
HTML_FIELDS = [
    ("kconfig-label", prop.kconfig_key("label"), "label", prop.PRINTABLE.map(lambda t: "Demo " + t), shows_label,
     "Plain Board", label_key),
    ("manufacturer", prop.top_key("manufacturer"), "manufacturer",
     st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True), shows_manufacturer, "plain", str),
    ("variant-name", variant_name, "name", prop.ident("a-z0-9", "a-z0-9.-"), shows_full_name, "plain",
     full_name_of),
    ("codec", source_codec, "codec", st.from_regex(r"[A-Z0-9]{2,6}( \+ [A-Z0-9]{2,6})?", fullmatch=True),
     shows_codec, "ES8311", str),
]

FAST = settings(max_examples=2, deadline=None, phases=[Phase.explicit, Phase.generate], derandomize=True, suppress_health_check=list(HealthCheck),
                database=None)
LONG = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _make(config: Any, size: int) -> Callable[..., None]:
    @pytest.mark.parametrize(("name", "setter", "field", "valid", "shows", "plain", "distinct"), HTML_FIELDS,
                             ids=[row[0] for row in HTML_FIELDS])
    def test(chromium: Any, name: str, setter: Setter, field: str, valid: st.SearchStrategy[str],
             shows: Callable[..., None], plain: str, distinct: Callable[[str], Any]) -> None:
        @config
        @given(st.lists(prop.HOSTILE, min_size=size, max_size=size), st.lists(valid, min_size=size, max_size=size))
        def batch(hostile: list[str], plausible: list[str]) -> None:  # half hostile text, half plausible values
            run_batch(chromium, name, setter, field, hostile + plausible, shows, plain, distinct)

        batch()

    return test


test_html_strings_refused_or_round_trip = _make(FAST, 4)
test_html_strings_refused_or_round_trip_long = pytest.mark.slow(_make(LONG, 8))
