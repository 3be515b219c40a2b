"""Every input bounded before it is read, every numeric option validated (issue 39, item 7), as a table: files +
argv -> exit status and one clear stderr line naming the bound. Before the fixes these rows hung (FIFOs), read
600 MB whole, traced back, waited forever or were accepted silently.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.conftest import assert_clean_failure, run_cli

REPO = Path(__file__).resolve().parents[2]
BOARDS = str(REPO / "boards")
PROVISION = ["provision", "bread-compact-wifi", "--boards", BOARDS]


def _fifo(name: str) -> Callable[[Path], None]:
    return lambda d: os.mkfifo(d / name)


def _sparse(name: str, size: int) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        with open(d / name, "wb") as fh:
            fh.truncate(size)
    return make


def _text(name: str, text: str) -> Callable[[Path], None]:
    return lambda d: (d / name).write_text(text, encoding="utf-8")


def _nothing(d: Path) -> None:
    del d


BIG_CELL = "name,ota_url,ssid,password\na,http://192.168.1.10/ota/," + "s" * 200_000 + ",p\n"
NVS_256M = "nvs, data, nvs, 0x9000, 256M\nfactory, app, factory, , 1M\n"

# (id, setup, argv ("{d}" = the case's directory), exit status, stderr regex)
ROWS: list[tuple[str, Callable[[Path], None], list[str], int, str]] = [
    ("provision-csv-fifo", _fifo("f.csv"), [*PROVISION, "--csv", "{d}/f.csv", "-o", "{d}/out"], 1,
     r"f\.csv: not a regular file \(a FIFO"),
    ("provision-table-fifo", _fifo("t.csv"), [*PROVISION, "--table", "{d}/t.csv", "--wifi", "a:b", "-o", "{d}/x.bin"],
     1, r"t\.csv: not a regular file \(a FIFO"),
    ("provision-table-600mb", _sparse("t.csv", 600 << 20),
     [*PROVISION, "--table", "{d}/t.csv", "--wifi", "a:b", "-o", "{d}/x.bin"], 1,
     r"t\.csv: file is 629145600 bytes, over the 1 MiB bound for a partition table"),
    ("partitions-check-fifo", _fifo("p.csv"), ["partitions", "check", "{d}/p.csv"], 1, r"p\.csv: not a regular file"),
    ("provision-csv-200kb-cell", _text("d.csv", BIG_CELL), [*PROVISION, "--csv", "{d}/d.csv", "-o", "{d}/out"], 1,
     r"d\.csv:2: not a CSV row \(field larger than field limit"),
    ("provision-ipv6-unclosed", _nothing, [*PROVISION, "--ota-url", "http://[::1/ota/", "-o", "{d}/x.bin"], 1,
     r"--ota-url: 'http://\[::1/ota/' is not a valid URL .*close the IPv6 address"),
    ("provision-non-utf8-ssid", _nothing, [*PROVISION, "--wifi", "\udcff\udcfe:password", "-o", "{d}/x.bin"], 1,
     r"--wifi: the SSID is not UTF-8 text \(byte 0xff at offset 0\)"),
    ("provision-non-utf8-url", _nothing, [*PROVISION, "--ota-url", "http://host/\udcffota/", "-o", "{d}/x.bin"], 1,
     r"--ota-url: the URL is not UTF-8 text"),
    ("provision-nvs-256mb", _text("t.csv", NVS_256M),
     [*PROVISION, "--table", "{d}/t.csv", "--wifi", "a:b", "-o", "{d}/x.bin"], 1,
     r"t\.csv:1: the nvs partition is 0x10000000 bytes, over the 0x1000000 \(16 MiB\) bound"),
    ("matrix-build-jobs-0", _nothing, ["matrix", "build", "--all", "--jobs", "0"], 2,
     r"'0' is out of range; expected a value between 1 and 64"),
    ("hil-run-jobs-0", _nothing, ["hil", "run", "--jobs", "0"], 2, r"between 1 and 64"),
    ("matrix-size-fail-above-nan", _nothing, ["matrix", "size", "--base", "{d}", "--fail-above", "nan", "{d}"], 2,
     r"--fail-above.*'nan' is not a finite number; expected a value between 0 and 1000000 percent"),
    ("matrix-size-min-free-nan", _nothing, ["matrix", "size", "--base", "{d}", "--min-free", "nan", "{d}"], 2,
     r"--min-free.*'nan' is not a finite number; expected a value between 0 and 100 percent"),
    ("vboard-psram-negative", _nothing, ["vboard", "--psram", "-5"], 2,
     r"--psram.*'-5' is out of range; expected a value between 0 and 64 MB"),
    ("vboard-port-negative", _nothing, ["vboard", "--port", "-1"], 2,
     r"--port.*'-1' is out of range; expected a value between 0 and 65535"),
    ("hil-run-wait-nan", _nothing, ["hil", "run", "--wait", "nan"], 2,
     r"--wait.*'nan' is not a finite number; expected a value between 0 and 86400 seconds"),
    ("hil-run-wait-inf", _nothing, ["hil", "run", "--wait", "inf"], 2, r"--wait.*'inf' is not a finite number"),
    ("matrix-list-shard-huge", _nothing, ["matrix", "list", "--boards", str(REPO / "boards"), "--shard", "1/100000000"], 1,
     r"--shard '1/100000000': N must be at most 4096"),
]


@pytest.mark.parametrize(("case", "setup", "argv", "code", "expected"), ROWS, ids=[r[0] for r in ROWS])
def test_input_is_bounded(case: str, setup: Callable[[Path], None], argv: list[str], code: int, expected: str,
                          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    setup(tmp_path)
    got, _, err = run_cli([a.replace("{d}", str(tmp_path)) for a in argv], capsys)
    assert got == code, err
    assert_clean_failure(got, err, expected)
    assert not (tmp_path / "x.bin").exists() and not (tmp_path / "out").exists(), "something was written"
    assert not re.search(r"bug in xzbuild", err)


def test_matrix_size_does_not_follow_a_map_path_out_of_the_build(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A base build downloaded from CI names its linker map: `../secret` (or an absolute path) is refused at the
    variant, never handed to esp-idf-size (before: the map outside the build dir was read)."""
    import json

    (tmp_path / "secret").write_text("not a map\n", encoding="utf-8")
    for side, path in (("base", "../secret"), ("head", "v1/app.map")):
        (tmp_path / side / "v1").mkdir(parents=True)
        record = {"full_name": "v1", "target": "esp32s3", "app_size": 4, "files": [],
                  "debug": {"map": {"path": path}}}
        (tmp_path / side / "manifest.json").write_text(json.dumps({"variants": [record]}), encoding="utf-8")
    (tmp_path / "head" / "v1" / "app.map").write_text("", encoding="utf-8")
    code, _, err = run_cli(["matrix", "size", "--base", str(tmp_path / "base"), str(tmp_path / "head")], capsys)
    assert_clean_failure(code, err, r"'\.\./secret': expected a relative path of plain names inside")


def test_a_board_name_with_url_delimiters_gets_a_page_the_catalog_links(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A release record's board `x?y#z`: the catalog's link, resolved as a browser resolves a relative URL
    (urljoin), reaches the board page that was written (before: the page `boards/x?y#z.html` was written and the
    link stopped at `?`)."""
    from urllib.parse import unquote, urljoin, urlsplit

    from tests.hostile.test_confinement import make_dist, site

    dist = make_dist(tmp_path, board="x?y#z")
    code, err = site(tmp_path, dist, capsys)
    assert code == 0, err
    root = tmp_path / "out" / "site"
    catalog = (root / "index.html").read_text(encoding="utf-8")
    hrefs = re.findall(r'href="(boards/[^"]*)"', catalog)
    assert hrefs, catalog
    base = "https://example.test/site/index.html"
    for href in hrefs:
        path = urlsplit(urljoin(base, href.replace("&amp;", "&"))).path
        page = root / unquote(path.removeprefix("/site/"))
        assert page.is_file(), (href, sorted(p.name for p in (root / "boards").iterdir()))


DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@pytest.mark.skipif(not DEJAVU.is_file() and not os.environ.get("CI"), reason="fonts-dejavu-core not installed")
def test_a_font_no_partition_holds_is_refused_by_an_estimate(tmp_path: Path) -> None:
    """300 px / 8 bpp over the whole Unicode range (1.2 GB to build before): refused from a rendered sample,
    under a 600 MB address-space limit, in seconds, nothing written."""
    from tests.hostile.conftest import run_child

    proc = run_child(["assets", "font", str(DEJAVU), "--size", "300", "--bpp", "8", "--range", "0x0-0x10FFFF",
                      "-o", str(tmp_path / "f.bin")], tmp_path, limit_kb=600_000, timeout=60)
    assert_clean_failure(proc.returncode, proc.stderr,
                         r"DejaVuSans\.ttf: \d+ glyphs at 300 px / 8 bpp are estimated at \d+ MiB of bitmaps .*over "
                         r"the 32 MiB the assets partition can hold")
    assert not (tmp_path / "f.bin").exists()
