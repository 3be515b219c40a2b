"""`xzbuild release site`: a static board catalog with one-click flashing, from a `matrix build` output dir.

Layout of the site (every path relative, so it works from a Pages URL, a file server or a release artifact)::

    index.html                      searchable catalog, one row per variant
    boards/<board>.html             one page per board: its variants, Install / Update, downloads, preview, HIL
    static/site.css, site.js        the catalog's style and search (no framework)
    static/esp-web-tools/*.js       the ESP Web Tools browser bundle, copied from the npm package
    fw/<dist path>                  manifests, images and zips, byte-identical to dist (hard links when possible)
    fw/<variant>/ota.json           with --base-url: the OTA record the firmware fetches, its app image's absolute URL
    previews/<variant>.png          asset-bundle previews, when given
    site.json                       what was published: version, ESP Web Tools pin (version + integrity), variants

The output is deterministic (no timestamps; the release date comes from ``--date``) and replaces OUT in one
rename, so a reader sees the old site or the new one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xzbuild.core.errors import Location, UserError
from xzbuild.core.fsutil import confined_file, link_or_copy, replace_dir
from xzbuild.core.resources import templates_dir
from xzbuild.release.chipcheck import apps_index, chip_check_facts, find_esptool_js, nvs_facts
from xzbuild.release.facts import VariantFacts, variant_facts
from xzbuild.release.inputs import Manifest, Release, ReleasedVariant, read_release
from xzbuild.release.urls import SITE_BASE, browser_target, link_problem
from xzbuild.release.webinstall import WebTools, find_web_tools, install_behaviour

if TYPE_CHECKING:
    from xzbuild.model import Variant

TEMPLATES = templates_dir() / "site"
STATIC = ("site.css", "site.js", "board.js", "chipcheck.js", "nvsgen.js", "ownserver.js")
TEXT_SUFFIXES = (".html", ".js", ".css")
#: Third-party browser bundles the site serves unchanged (pinned npm packages): counted apart from the site's own
#: HTML/JS/CSS, since their size is fixed by the pin and does not grow with the catalog (docs/release-site.md).
VENDORED = ("static/esp-web-tools/", "static/esptool-js/")


@dataclass(frozen=True)
class SiteOptions:
    """One `release site` request."""

    dist: Path
    out: Path
    boards_dir: Path | None = Path("boards")
    web_tools: Path | None = None
    previews: Path | None = None
    hil: tuple[Path, ...] = ()
    date: str | None = None
    title: str = "xiaozhi firmware"
    base_url: str | None = None  # where OUT is published: each variant gets fw/<variant>/ota.json with absolute URLs


def check_site_url(base_url: str) -> str:
    """``--base-url`` as the OTA records use it: an absolute http(s) URL without query or fragment, no trailing
    slash. The firmware GETs ``firmware.url`` as given (device-protocol §2.5), so nothing relative will do."""
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment \
            or any(c.isspace() or ord(c) < 0x20 or c in '"<>\\^`{|}' for c in base_url):
        raise UserError(f"--base-url {base_url!r}: expected the absolute http(s) URL the site is published at, "
                        "without query or fragment, such as https://OWNER.github.io/REPO")
    return base_url.rstrip("/")


def ota_record(variant: ReleasedVariant, base_url: str, dist: Path) -> dict[str, Any]:
    """The OTA record of one variant (device-protocol §2.2 ``firmware{version, url}``): the app image's
    absolute URL under ``base_url``/fw/ and the version its app descriptor carries."""
    from urllib.parse import quote

    where = Location(str(dist / variant.full_name / "release.json"))
    app = next((f for f in variant.files if f.role == "app"), None)
    version = variant.get("app_version")
    if app is None:
        raise UserError(f"{variant.full_name}: the release record lists no app image (role 'app'), so no OTA "
                        "record can name one; rebuild the variant with `xzbuild matrix build`", where)
    if not isinstance(version, str) or not version.strip():
        raise UserError(f"{variant.full_name}: the release record has no app_version, which the OTA record "
                        "must carry; rebuild the variant with `xzbuild matrix build`", where)
    return {"firmware": {"version": version, "url": f"{base_url}/fw/{quote(app.path)}"}}


@dataclass
class SiteSummary:
    """What was written, for the CLI's summary line and ``--json``."""

    out: str
    version: str
    boards: int
    variants: int
    text_bytes: int  # the site's own HTML + JS + CSS, excluding images, firmware and the vendored flashers
    firmware_bytes: int
    web_tools: str
    update_paths: int
    notes: list[str] = field(default_factory=list)
    ota_records: int = 0  # fw/<variant>/ota.json files written (with --base-url)
    vendored_bytes: int = 0  # the vendored flashers' JS (ESP Web Tools, esptool-js), VENDORED


@dataclass
class Offer:
    """One Install (factory) or Update button on a board page, or why it is not there."""

    kind: str
    url: str | None  # the manifest URL relative to the board page
    note: str | None = None
    writes: tuple[str, ...] = ()  # file names the installer writes, in manifest order


@dataclass
class VariantView:
    """A variant as the templates see it."""

    full_name: str
    facts: VariantFacts
    record: ReleasedVariant
    board_page: str
    offers: dict[str, Offer]
    downloads: list[dict[str, Any]]
    preview: str | None
    search: str
    chip_check: dict[str, str] = field(default_factory=dict)  # data-* facts the page's chip check compares

    @property
    def fit(self) -> tuple[int, int, int]:
        """(app bytes, slot bytes, percent of the slot used)."""
        size, slot = int(self.record.get("app_size", 0)), int(self.record.get("app_partition_size", 0))
        return size, slot, round(100 * size / slot) if slot else 0


def _model_variants(boards_dir: Path | None) -> dict[str, Variant]:
    if boards_dir is None or not boards_dir.is_dir():
        return {}
    from xzbuild.model import load_boards

    return {v.full_name: v for v in load_boards(boards_dir).variants()}


def _nvs_ranges(release: Release, variant: ReleasedVariant) -> list[tuple[int, int]] | None:
    """Byte ranges of NVS partitions (settings, Wi-Fi credentials) from the variant's partition table; None when
    the release does not carry a readable table."""
    from xzbuild.partitions import parse_binary

    table = next((f for f in variant.files if f.role == "partition-table"), None)
    if table is None:
        return None
    try:
        parsed = parse_binary(confined_file(release.dist, table.path).read_bytes(), table.path)
    except (OSError, UserError):
        return None
    return [(p.offset, p.end) for p in parsed if p.type_name == "data" and p.subtype_name == "nvs"]


NOT_OFFERED = "Update from the browser is not offered: "


def _update_refusal(release: Release, variant: ReleasedVariant, manifest: Manifest) -> str | None:
    """Why the update manifest must not get a button (it would lose the settings), or None."""
    behaviour = install_behaviour(manifest.data)
    if behaviour.erases_without_asking:
        return "with this release's update manifest ESP Web Tools would erase the whole flash, settings included."
    nvs = _nvs_ranges(release, variant)
    if nvs is None:
        return "the release has no readable partition table to show that the update keeps the settings."
    base = release.dist / Path(manifest.path).parent
    spans = [(offset, offset + _size(base / path)) for path, offset in behaviour.parts]
    if any(lo < end and start < hi for lo, hi in spans for start, end in nvs):
        return "this release's update manifest writes over the settings (NVS) partition."
    return None


def _offers(release: Release, variant: ReleasedVariant, page_dir: str) -> dict[str, Offer]:
    note = variant.get("webtools_note")
    offers: dict[str, Offer] = {}
    for kind in ("factory", "update"):
        manifest: Manifest | None = variant.manifests.get(kind)
        if manifest is None:
            why = f"{note}." if note else f"this release has no {'update' if kind == 'update' else 'install'} manifest."
            offers[kind] = Offer(kind, None, (NOT_OFFERED if kind == "update" else "Browser install is not offered: ") + why)
            continue
        refusal = _update_refusal(release, variant, manifest) if kind == "update" else None
        writes = tuple(Path(path).name for path, _ in install_behaviour(manifest.data).parts)
        offers[kind] = Offer(kind, None, NOT_OFFERED + refusal) if refusal else \
            Offer(kind, f"{page_dir}fw/{manifest.path}", writes=writes)
    return offers


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 1  # missing parts are reported when the files are copied


def _copy_tree_files(release: Release, stage: Path, variant: ReleasedVariant) -> int:
    """Copy what the variant's buttons and downloads fetch into ``stage/fw``; returns bytes copied."""
    wanted: dict[str, Location] = {}
    for manifest in variant.manifests.values():
        wanted[manifest.path] = Location(str(release.dist / manifest.path))
        base = Path(manifest.path).parent
        for build in manifest.data.get("builds", []):
            for part in build.get("parts", []) if isinstance(build, dict) else []:
                path = part.get("path") if isinstance(part, dict) else None
                where = Location(str(release.dist / manifest.path))
                problem = link_problem(path) if isinstance(path, str) else "is not a string"
                rel = (base / path).as_posix() if problem is None and isinstance(path, str) else ""
                own = {entry.path for entry in variant.files}
                if problem is None and not rel.startswith(f"{variant.full_name}/") and rel not in own:
                    problem = f"is not a file of variant {variant.full_name} (it names {rel})"
                if problem is not None:
                    target = browser_target(f"{SITE_BASE}fw/{manifest.path}", path) if isinstance(path, str) else ""
                    raise UserError(f"part path {path!r} {problem}" + (f"; a browser would fetch {target}" if target
                                    else "") + "; use a path relative to the manifest naming one of the variant's "
                                    "files, like merged.bin", where)
                wanted[rel] = where
    record = Location(str(release.dist / variant.full_name / "release.json"))
    for entry in variant.files:
        _check_link(entry.path, "files[].path", record)
        wanted[entry.path] = record
    zip_entry = variant.get("zip", {})
    if isinstance(zip_entry, dict) and isinstance(zip_entry.get("path"), str):
        _check_link(zip_entry["path"], "zip.path", record)
        wanted[zip_entry["path"]] = record
    total = 0
    for rel, where in sorted(wanted.items()):
        src = confined_file(release.dist, rel, where)  # no '..' anywhere, no link: reads stay in dist
        dst = stage / "fw" / rel  # and so writes stay in the site
        dst.parent.mkdir(parents=True, exist_ok=True)
        if not dst.exists():
            link_or_copy(src, dst)
            total += src.stat().st_size
    return total


def _check_link(path: str, field: str, where: Location) -> None:
    problem = link_problem(path)
    if problem is not None:
        raise UserError(f"{field} {path!r} {problem}; a download link to it would fetch "
                        f"{browser_target(SITE_BASE + 'fw/', path)}; rebuild the release", where)


def _downloads(variant: ReleasedVariant, page_dir: str) -> list[dict[str, Any]]:
    zip_entry = variant.get("zip", {})
    rows = []
    if isinstance(zip_entry, dict) and zip_entry.get("path"):
        rows.append({"label": "Release zip (merged image, upstream layout)", "url": f"{page_dir}fw/{zip_entry['path']}",
                     "name": Path(zip_entry["path"]).name, "size": zip_entry.get("size"),
                     "sha256": zip_entry.get("sha256"), "offset": None})
    labels = {"merged": "Merged image (flash at 0x0)", "app": "App image (OTA)", "bootloader": "Bootloader",
              "partition-table": "Partition table", "otadata": "OTA data (initial)", "assets": "Assets bundle"}
    order = list(labels)
    for entry in sorted(variant.files, key=lambda f: (order.index(f.role) if f.role in order else len(order),
                                                      f.path)):
        rows.append({"label": labels.get(entry.role, entry.role), "url": f"{page_dir}fw/{entry.path}",
                     "name": Path(entry.path).name, "size": entry.size, "sha256": entry.sha256,
                     "offset": entry.offset if entry.role != "merged" else 0})
    return rows


def board_slug(board_dir: str) -> str:
    """A board dir (``waveshare/esp32-p4-nano``) as a file name a relative link reaches unchanged: ``/`` becomes
    ``-``; any character outside ``[A-Za-z0-9._-]`` (``?`` and ``#`` would end a URL's path), a leading ``.``
    and ``~`` itself become ``~XX`` (UTF-8 bytes in hex), so distinct boards keep distinct pages."""
    text = board_dir.replace("/", "-")
    out = []
    for i, ch in enumerate(text):
        if (ch.isascii() and (ch.isalnum() or ch in "_-")) or (ch == "." and i > 0):
            out.append(ch)
        else:
            out.extend(f"~{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
    return "".join(out) or "~"


def _views(release: Release, models: dict[str, Variant], stage: Path) -> tuple[list[VariantView], int]:
    views, copied = [], 0
    for variant in release.variants:
        facts = variant_facts(variant, models.get(variant.full_name))
        board = str(variant.get("board", variant.full_name))
        preview = None
        if variant.preview:
            preview = f"previews/{variant.full_name}.png"
            (stage / "previews").mkdir(exist_ok=True)
            shutil.copyfile(variant.preview, stage / preview)
        copied += _copy_tree_files(release, stage, variant)
        search = " ".join([facts.name, variant.full_name, board, facts.manufacturer, facts.chip, facts.chip_short,
                           str(variant.get("target", "")), facts.codec, facts.display, facts.network,
                           facts.language, facts.wake_word]).lower()
        views.append(VariantView(full_name=variant.full_name, facts=facts, record=variant,
                                 board_page=f"boards/{board_slug(board)}.html",
                                 offers=_offers(release, variant, "../"), downloads=_downloads(variant, "../"),
                                 preview=preview, search=search,
                                 chip_check=chip_check_facts(variant) | nvs_facts(release, variant)))
    return views, copied


def _render(template: str, **context: Any) -> str:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["kib"] = lambda n: ("—" if not isinstance(n, int) else f"{n} B" if n < 1024 else
                                    f"{n / 1024:,.0f} KiB")
    env.filters["hex"] = lambda n: f"0x{int(n):x}" if isinstance(n, int) else "—"
    return env.get_template(template).render(**context)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _site_record(options: SiteOptions, release: Release, web: WebTools, views: list[VariantView],
                 esptool_js: tuple[str, bytes]) -> dict[str, Any]:
    return {
        "schema_version": 1, "title": options.title, "version": release.version, "date": options.date,
        "esptool_js": {"version": esptool_js[0], "file": "static/esptool-js/bundle.js",
                       "sha384": "sha384-" + base64.b64encode(hashlib.sha384(esptool_js[1]).digest()).decode()},
        "esp_web_tools": {"version": web.version, "npm_integrity": web.npm_integrity,
                          "files": {f"static/esp-web-tools/{k}": v for k, v in web.integrity().items()}},
        "variants": [{"full_name": v.full_name, "board": v.record.get("board"), "page": v.board_page,
                      "target": v.record.get("target"), "chip_variant": v.facts.chip_variant or None,
                      "manifests": {k: (o.url or "").removeprefix("../") or None for k, o in v.offers.items()},
                      "notes": {k: o.note for k, o in v.offers.items() if o.note}} for v in views],
    }


def remove_stale_stages(out: Path) -> list[Path]:
    """Remove ``.<out>.<pid>.tmp`` / ``.<out>.<pid>.old.tmp`` directories left by a run that was killed (its
    process is gone); a run still going keeps its own. Returns what was removed."""
    import glob
    import re

    pattern = re.compile(rf"\.{re.escape(out.name)}\.(\d+)(?:\.old)?\.tmp")
    removed = []
    for path in out.parent.glob(f".{glob.escape(out.name)}.*.tmp") if out.parent.is_dir() else []:
        found = pattern.fullmatch(path.name)
        if found is None or path.is_symlink() or not path.is_dir():
            continue
        pid = int(found.group(1))
        if pid != os.getpid() and _alive(pid):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or a number no pid can be
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def build_site(options: SiteOptions) -> SiteSummary:
    """Write the site for ``options.dist`` into ``options.out`` (replaced as a whole); returns a summary."""
    out = options.out
    base_url = check_site_url(options.base_url) if options.base_url is not None else None
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "site.json").is_file())):
        raise UserError(f"{out}: exists and is not a site written by `xzbuild release site`; choose a new or "
                        "empty directory")
    web = find_web_tools(options.web_tools)
    release = read_release(options.dist, options.previews, list(options.hil))
    models = _model_variants(options.boards_dir)
    stage = out.parent / f".{out.name}.{os.getpid()}.tmp"
    remove_stale_stages(out)
    stage.mkdir(parents=True)
    try:
        views, firmware_bytes = _views(release, models, stage)
        if base_url is not None:
            for view in views:  # beside the variant's files, as the release tags publish them (docs/ci.md)
                _write(stage / "fw" / view.full_name / "ota.json",
                       json.dumps(ota_record(view.record, base_url, release.dist), indent=2) + "\n")
        for name, data in web.files.items():
            (stage / "static" / "esp-web-tools").mkdir(parents=True, exist_ok=True)
            (stage / "static" / "esp-web-tools" / name).write_bytes(data)
        for name in STATIC:
            _write(stage / "static" / name, (TEMPLATES / name).read_text(encoding="utf-8"))
        esptool_version, esptool_bundle = find_esptool_js(web)
        (stage / "static" / "esptool-js").mkdir(parents=True, exist_ok=True)
        (stage / "static" / "esptool-js" / "bundle.js").write_bytes(esptool_bundle)
        apps = apps_index(release, {v.full_name: v.board_page for v in views})
        _write(stage / "apps.json", json.dumps(apps, indent=1, sort_keys=True) + "\n")
        boards: dict[str, list[VariantView]] = {}
        for view in views:
            boards.setdefault(view.board_page, []).append(view)
        common = {"title": options.title, "version": release.version, "date": options.date or "",
                  "web": web, "integrity": web.integrity()}
        _write(stage / "index.html", _render("catalog.html.j2", root="", views=views, boards=len(boards), **common))
        for page, group in sorted(boards.items()):
            _write(stage / page, _render("board.html.j2", root="../", views=group, **common))
        _write(stage / "site.json", json.dumps(_site_record(options, release, web, views,
                                                            (esptool_version, esptool_bundle)), indent=2,
                                               sort_keys=True, ensure_ascii=False) + "\n")
        text = vendored = 0
        for p in stage.rglob("*"):
            rel = p.relative_to(stage).as_posix()
            if p.suffix in TEXT_SUFFIXES and p.is_file() and not rel.startswith("fw/"):
                if rel.startswith(VENDORED):
                    vendored += p.stat().st_size
                else:
                    text += p.stat().st_size
        replace_dir(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    updates = sum(1 for v in views if v.offers["update"].url)
    by_reason: dict[str, list[str]] = {}
    for v in views:
        for offer in v.offers.values():
            if offer.note:
                by_reason.setdefault(offer.note, []).append(v.full_name)
    notes = [f"{len(names)} variant(s): {reason} ({', '.join(names[:3])}{', …' if len(names) > 3 else ''})"
             for reason, names in sorted(by_reason.items())]
    return SiteSummary(out=str(out), version=release.version, boards=len(boards), variants=len(views),
                       text_bytes=text, firmware_bytes=firmware_bytes, web_tools=web.version, update_paths=updates,
                       notes=notes, ota_records=len(views) if base_url is not None else 0, vendored_bytes=vendored)


def summary_dict(summary: SiteSummary) -> dict[str, Any]:
    """The summary as JSON-ready data."""
    return asdict(summary)
