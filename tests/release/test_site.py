"""`xzbuild release site` without a browser: determinism, errors, the update-path rule, P4/P4X, the bundle pin."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from tests.builder.firmware import REPO
from tests.release.factory import SMALL, WEB_TOOLS, site_args
from xzbuild.cli.main import main


def tree_digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def dist(small_dist: Path, tmp_path: Path) -> Path:
    """A private copy of the small release that a test may damage."""
    copy = tmp_path / "dist"
    shutil.copytree(small_dist, copy)
    return copy


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


class Buttons(HTMLParser):
    """Install buttons and headings of a board page, read with the standard library's HTML parser."""

    def __init__(self) -> None:
        super().__init__()
        self.buttons: list[dict[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "esp-web-install-button":
            self.buttons.append(dict(attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def page(path: Path) -> Buttons:
    parser = Buttons()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_same_release_same_site_bytes(small_dist: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(site_args(small_dist, tmp_path / "a")) == 0
    assert main(site_args(small_dist, tmp_path / "b")) == 0
    assert main(site_args(small_dist, tmp_path / "a")) == 0  # rewriting an existing site replaces it
    a, b = tree_digest(tmp_path / "a"), tree_digest(tmp_path / "b")
    assert a == b
    assert "index.html" in a and "site.json" in a
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no stage dir left behind


def test_bundle_is_the_npm_package_and_pinned(small_dist: Path, tmp_path: Path) -> None:
    assert main(site_args(small_dist, tmp_path / "site")) == 0
    site = json.loads((tmp_path / "site" / "site.json").read_text())
    package = json.loads((WEB_TOOLS / "package.json").read_text())
    pinned = site["esp_web_tools"]
    assert pinned["version"] == package["version"]
    lock = json.loads((WEB_TOOLS.parent / ".package-lock.json").read_text())
    assert pinned["npm_integrity"] == lock["packages"]["node_modules/esp-web-tools"]["integrity"]
    shipped = sorted(p.name for p in (WEB_TOOLS / "dist" / "web").glob("*.js"))
    assert sorted(Path(k).name for k in pinned["files"]) == shipped
    for rel, sri in pinned["files"].items():
        data = (tmp_path / "site" / rel).read_bytes()
        assert data == (WEB_TOOLS / "dist" / "web" / Path(rel).name).read_bytes()
        assert sri == "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()
    board_html = (tmp_path / "site" / "boards" / "bread-compact-wifi.html").read_text()
    assert f'integrity="{pinned["files"]["static/esp-web-tools/install-button.js"]}"' in board_html
    assert "https://" not in board_html.replace("https://www.improv-wifi.com", "")  # no CDN


def _codec_chips(board_file: str) -> set[str]:
    data = yaml.safe_load((REPO / "boards" / board_file).read_text())
    return {k.removesuffix("_addr").upper() for k in data.get("hardware", {}).get("codec", {}) if k.endswith("_addr")}


def test_catalog_rows_carry_the_board_facts(small_dist: Path, tmp_path: Path) -> None:
    assert main(site_args(small_dist, tmp_path / "site")) == 0
    index = (tmp_path / "site" / "index.html").read_text()
    released = sorted(p.parent.name for p in small_dist.glob("*/release.json"))
    assert index.count("<tr data-search=") == len(released)
    for chip in _codec_chips("waveshare/esp32-c6-touch-amoled-2.06.yaml"):
        assert chip in index
    assert "ESP32-C6" in index and "ESP32-S3" in index and "P4X rev ≥ v3" in index and "P4 rev &lt; v3" in index


def test_p4_and_p4x_cannot_be_confused(small_dist: Path, tmp_path: Path) -> None:
    assert main(site_args(small_dist, tmp_path / "site")) == 0
    board = page(tmp_path / "site" / "boards" / "espressif-esp32-p4-function-ev-board.html")
    text = " ".join(board.text)
    assert "Two chip revisions" in text
    by_variant = {b["data-variant"]: b for b in board.buttons if b["data-kind"] == "factory"}
    assert set(by_variant) == {"espressif-esp32-p4-function-ev-board", "espressif-esp32-p4x-function-ev-board"}
    for name, label in (("espressif-esp32-p4-function-ev-board", "ESP32-P4 (chip revision below v3)"),
                        ("espressif-esp32-p4x-function-ev-board", "ESP32-P4X (chip revision v3 or later)")):
        record = json.loads((small_dist / name / "release.json").read_text())
        assert f"{label} — runs on chip revisions {record['chip_revision']['min']} – " \
               f"{record['chip_revision']['max']}" in text


# The update path, by what ESP Web Tools 10.4.0 does with a manifest on a board without Improv Serial
# (src/install-dialog.ts `_renderDashboardNoImprov`: no `new_install_prompt_erase` → `_startInstall(true)`, i.e.
# erase everything; with it → the "Erase device" checkbox, unticked; src/util/manifest.ts maps the deprecated
# `new_install_skip_erase: true` to prompting). NVS of the 16 MB table is at 0x9000 (boards/partitions/v2/16m.csv).
UPDATE_CASES = [
    ("no-prompt-erases", {"new_install_prompt_erase": False}, [("xiaozhi.bin", 0x20000)], False),
    ("prompt-keeps-nvs", {"new_install_prompt_erase": True}, [("xiaozhi.bin", 0x20000)], True),
    ("deprecated-skip-erase", {"new_install_skip_erase": True}, [("xiaozhi.bin", 0x20000)], True),
    ("writes-nvs", {"new_install_prompt_erase": True}, [("merged-binary.bin", 0x0)], False),
    ("nvs-offset", {"new_install_prompt_erase": True}, [("xiaozhi.bin", 0x9000)], False),
]


@pytest.mark.parametrize(("case", "flags", "parts", "offered"), UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
def test_update_path_offered_only_when_it_keeps_settings(dist: Path, tmp_path: Path, case: str,
                                                         flags: dict[str, bool], parts: list[tuple[str, int]],
                                                         offered: bool) -> None:
    name = "bread-compact-wifi"
    manifest = {"name": f"xiaozhi {name}", "version": "2.4.2", "new_install_improv_wait_time": 0, **flags,
                "builds": [{"chipFamily": "ESP32-S3", "parts": [{"path": p, "offset": o} for p, o in parts]}]}
    (dist / name / "webtools-update.json").write_text(json.dumps(manifest))
    assert main(site_args(dist, tmp_path / "site")) == 0
    board = page(tmp_path / "site" / "boards" / "bread-compact-wifi.html")
    updates = [b for b in board.buttons if b["data-kind"] == "update" and b["data-variant"] == name]
    assert bool(updates) == offered
    if offered:
        assert updates[0]["manifest"] == f"../fw/{name}/webtools-update.json"
    else:
        assert "Update from the browser is not offered" in " ".join(board.text)


def _damage_part(dist: Path) -> None:
    (dist / "bread-compact-wifi" / "xiaozhi.bin").unlink()


def _damage_manifest(dist: Path) -> None:
    (dist / "bread-compact-wifi" / "webtools-factory.json").write_text("{not json")


def _no_records(dist: Path) -> None:
    for p in dist.glob("*/release.json"):
        p.unlink()


def _absolute_part(dist: Path) -> None:
    path = dist / "bread-compact-wifi" / "webtools-factory.json"
    data = json.loads(path.read_text())
    data["builds"][0]["parts"][0]["path"] = "https://example.com/fw.bin"
    path.write_text(json.dumps(data))


def _string_offset(dist: Path) -> None:
    path = dist / "bread-compact-wifi" / "webtools-update.json"
    data = json.loads(path.read_text())
    data["builds"][0]["parts"][0]["offset"] = "0x10000"
    path.write_text(json.dumps(data))


def _no_app_version(dist: Path) -> None:
    path = dist / "bread-compact-wifi" / "release.json"
    data = json.loads(path.read_text())
    del data["app_version"]
    path.write_text(json.dumps(data))


ERROR_CASES = [
    ("ota-without-version", _no_app_version, ["--base-url", "https://owner.example/xz"],
     "bread-compact-wifi: the release record has no app_version, which the OTA record must carry"),
    ("string-offset", _string_offset, [], "builds[0].parts[0].offset: expected an integer, got '0x10000'"),
    ("missing-part", _damage_part, [], "bread-compact-wifi/xiaozhi.bin: named here but missing from"),
    ("bad-manifest", _damage_manifest, [], "webtools-factory.json:1:2: not JSON"),
    ("no-records", _no_records, [], "no released variant (no */release.json)"),
    ("remote-part", _absolute_part, [], "part path 'https://example.com/fw.bin' starts with a URL scheme"),
    ("bad-date", None, ["--date", "1st of May"], "--date '1st of May': expected YYYY-MM-DD"),
    ("no-web-tools", None, ["--web-tools", "{tmp}/nowhere"], "not an esp-web-tools package"),
]


@pytest.mark.parametrize(("case", "damage", "extra", "message"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_bad_input_is_one_line_and_writes_nothing(dist: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  case: str, damage: object, extra: list[str], message: str) -> None:
    if callable(damage):
        damage(dist)
    out = tmp_path / "site"
    code, _, err = run(site_args(dist, out, *[e.format(tmp=tmp_path) for e in extra]), capsys)
    assert code != 0
    assert message.format(tmp=tmp_path) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_without_web_tools_says_how_to_get_them(small_dist: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XZBUILD_WEB_TOOLS", raising=False)
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "prefix"))
    args = [a for a in site_args(small_dist, tmp_path / "site") if a not in ("--web-tools", str(WEB_TOOLS))]
    code, _, err = run(args, capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "esp-web-tools not found" in err and "npm install" in err and "--web-tools DIR" in err


def test_refuses_to_replace_a_directory_it_did_not_write(small_dist: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "keep.md").write_text("mine")
    code, _, err = run(site_args(small_dist, out), capsys)
    assert code == 1 and "is not a site written by `xzbuild release site`" in err
    assert (out / "keep.md").read_text() == "mine"


def test_hil_results_and_previews_are_shown(small_dist: Path, tmp_path: Path) -> None:
    from hil.lab.runner import BoardResult

    hil = tmp_path / "hil.jsonl"
    result = BoardResult("vb1", "bread-compact-wifi", "esp32s3", "passed", tests={"tests": 7, "failures": 0})
    hil.write_text(json.dumps(result.as_dict()) + "\n")
    assert main(site_args(small_dist, tmp_path / "site", "--hil", str(hil))) == 0
    html = (tmp_path / "site" / "boards" / "bread-compact-wifi.html").read_text()
    assert "Hardware-in-the-loop: <strong>passed</strong> on vb1 (7 tests, 0 failed)" in html
    assert (tmp_path / "site" / "previews" / "bread-compact-wifi.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'src="../previews/bread-compact-wifi.png"' in html


def _drop_assets(dist: Path, variant: str) -> None:
    path = dist / variant / "release.json"
    record = json.loads(path.read_text())
    record["files"] = [f for f in record["files"] if f.get("role") != "assets"]
    path.write_text(json.dumps(record))


def test_each_preview_is_rendered_from_the_assets_image_that_ships(small_dist: Path, tmp_path: Path) -> None:
    """Issue 41: the preview is the bundle the variant flashes (the release's `assets` file), not a PNG from
    somewhere else: a PNG lying in the variant's directory is ignored, a changed shipped bundle changes the
    preview, and a variant that flashes no assets image has none."""
    from PIL import Image

    from assets_gen.container import pack_container, read_container

    dist = tmp_path / "dist"
    shutil.copytree(small_dist, dist)
    Image.new("RGB", (64, 32), (10, 120, 200)).save(dist / "bread-compact-wifi" / "preview.png")  # a stray PNG
    _drop_assets(dist, "bread-compact-esp32")
    assert main(site_args(dist, tmp_path / "site")) == 0
    shown = (tmp_path / "site" / "previews" / "bread-compact-wifi.png").read_bytes()
    assert shown != (dist / "bread-compact-wifi" / "preview.png").read_bytes()
    assert Image.open(io.BytesIO(shown)).size != (64, 32)
    assert not (tmp_path / "site" / "previews" / "bread-compact-esp32.png").exists()
    assert "previews/bread-compact-esp32.png" not in (tmp_path / "site" / "boards" / "bread-compact-esp32.html").read_text()
    record = json.loads((dist / "bread-compact-wifi" / "release.json").read_text())
    (shipped,) = [f["path"] for f in record["files"] if f.get("role") == "assets"]
    index = read_container((dist / shipped).read_bytes()).member("index.json")
    assert index is not None  # the stand-in's bundle: what the firmware would load
    big = pack_container([("index.json", index), ("extra.bin", bytes(4096))])
    (dist / shipped).write_bytes(big)
    assert main(site_args(dist, tmp_path / "site2")) == 0
    assert (tmp_path / "site2" / "previews" / "bread-compact-wifi.png").read_bytes() != shown


def test_reads_the_merged_release_of_the_workflow(dist: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """release.yml puts `matrix merge`'s manifest (build records) next to the variant dirs."""
    assert main(["matrix", "merge", str(dist / "results.jsonl"), "-o", str(dist / "manifest.json")]) == 0
    capsys.readouterr()
    code, out, _ = run([*site_args(dist, tmp_path / "site"), "--json"], capsys)
    assert code == 0
    summary = json.loads(out)
    records = [json.loads(p.read_text()) for p in sorted(dist.glob("*/release.json"))]
    assert summary["variants"] == len(records)
    assert summary["version"] == records[0]["project_version"]
    assert summary["boards"] == len({r["board"] for r in records})
    text = {p.relative_to(tmp_path / "site").as_posix(): p.stat().st_size for p in (tmp_path / "site").rglob("*")
            if p.suffix in (".html", ".js", ".css") and "fw" not in p.parts}
    vendored = {rel: n for rel, n in text.items() if rel.startswith(("static/esp-web-tools/", "static/esptool-js/"))}
    # the flashers are the pinned npm packages' files: counted apart, the rest is the site's own
    assert {rel.split("/")[1] for rel in vendored} == {"esp-web-tools", "esptool-js"}
    assert summary["vendored_bytes"] == sum(vendored.values())
    assert summary["text_bytes"] == sum(text.values()) - sum(vendored.values())


def test_no_update_button_when_the_settings_partition_is_unknown(dist: Path, tmp_path: Path) -> None:
    name = "bread-compact-wifi"
    manifest = {"name": name, "version": "2.4.2", "new_install_prompt_erase": True,
                "builds": [{"chipFamily": "ESP32-S3", "parts": [{"path": "xiaozhi.bin", "offset": 0x20000}]}]}
    (dist / name / "webtools-update.json").write_text(json.dumps(manifest))
    record_path = dist / name / "release.json"
    record = json.loads(record_path.read_text())
    record["files"] = [f for f in record["files"] if f["role"] != "partition-table"]
    record_path.write_text(json.dumps(record))
    assert main(site_args(dist, tmp_path / "site")) == 0
    board = page(tmp_path / "site" / "boards" / "bread-compact-wifi.html")
    assert not [b for b in board.buttons if b["data-kind"] == "update" and b["data-variant"] == name]
    assert "no readable partition table" in " ".join(board.text)


def test_a_chip_without_a_web_installer_gets_downloads_only(dist: Path, tmp_path: Path) -> None:
    """The release records why there is no manifest (ESP32-S31 has no ESP Web Tools chip family)."""
    record_path = dist / "bread-compact-wifi" / "release.json"
    record = json.loads(record_path.read_text())
    record["webtools"] = {"factory": None, "update": None}
    record["webtools_note"] = "ESP Web Tools has no chip family for esp32s31"
    record_path.write_text(json.dumps(record))
    assert main(site_args(dist, tmp_path / "site")) == 0
    board = page(tmp_path / "site" / "boards" / "bread-compact-wifi.html")
    assert not [b for b in board.buttons if b["data-variant"] == "bread-compact-wifi"]
    text = " ".join(board.text)
    assert "Browser install is not offered: ESP Web Tools has no chip family for esp32s31." in text
    assert "merged-binary.bin" in text  # the downloads are still there


def test_unwritable_output_is_one_line(small_dist: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run(site_args(small_dist, blocker / "site"), capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "choose another --out" in err


def _firmware_reads(record: dict[str, object]) -> tuple[str, str]:
    """The OTA record as the firmware reads it (device-protocol §2.2/§2.5): a `firmware` object whose `version`
    and `url` are both strings, the version split on '.' into integers, the url fetched as given."""
    firmware = record["firmware"]
    assert isinstance(firmware, dict)
    version, url = firmware["version"], firmware["url"]
    assert isinstance(version, str) and isinstance(url, str)
    assert all(part.strip().isdigit() for part in version.split("."))  # std::stoi on every segment
    return version, url


def test_base_url_publishes_an_ota_record_per_variant(small_dist: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`release site --base-url` writes fw/<variant>/ota.json: its URL, absolute under the base, names the app
    image the site serves, whose esp_app_desc_t (esp-images spec §2: magic 0xABCD5432 at file offset 0x20,
    version at 0x30) carries the record's version, so a device on an older version upgrades to it."""
    base = "https://owner.example/xz"
    code, out, _ = run([*site_args(small_dist, tmp_path / "site"), "--base-url", base + "/"], capsys)
    site = tmp_path / "site"
    names = sorted(p.parent.name for p in small_dist.glob("*/release.json"))
    assert code == 0 and f"{len(names)} OTA record(s)" in out and set(SMALL) <= set(names)
    assert sorted(p.parent.name for p in (site / "fw").glob("*/ota.json")) == names
    for name in names:
        version, url = _firmware_reads(json.loads((site / "fw" / name / "ota.json").read_text()))
        assert url.startswith(base + "/fw/" + name + "/"), url  # absolute; the base's trailing slash not doubled
        image = (site / url.removeprefix(base + "/")).read_bytes()  # the URL names a file the site serves
        assert image[0] == 0xE9 and int.from_bytes(image[0x20:0x24], "little") == 0xABCD5432, name
        assert image[0x30:0x50].split(b"\0")[0].decode() == version
        assert version.split(".") > ["0"]  # newer than a device at 0 would run
    # without --base-url a site cannot know its own URL: no OTA records, and the summary says how to get them
    code, out, _ = run(site_args(small_dist, tmp_path / "bare"), capsys)
    assert code == 0 and "no OTA records (pass --base-url URL)" in out
    assert not list((tmp_path / "bare" / "fw").glob("*/ota.json"))


@pytest.mark.parametrize("url", ["owner.example/xz", "ftp://owner.example/xz", "https://owner.example/xz?x=1",
                                 "https:///xz", "https://owner.example/x z"])
def test_base_url_must_be_absolute_http(small_dist: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        url: str) -> None:
    code, _, err = run([*site_args(small_dist, tmp_path / "site"), "--base-url", url], capsys)
    assert code != 0 and f"--base-url {url!r}" in err and "absolute http(s) URL" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "site").exists()
