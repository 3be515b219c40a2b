"""Readers and bounds (issue 25, item 7): files copied between machines are read as untrusted.

Each row is the CLI on a hostile file → exit 1, no traceback, one line naming ``file:line`` and what is wrong
(with the bound, where there is one). The expected texts come from the bounds docs/limits.md states, not from
the code; the formats come from their specs (JSON: RFC 8259 has no NaN/Infinity; GIF89a; PNG).
"""

from __future__ import annotations

import socket
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.conftest import assert_clean_failure, run_child, run_cli

REPO = Path(__file__).resolve().parents[2]

RECORD = ('{"full_name": "v1", "board": "v1", "name": "v1", "target": "esp32s3", "idf": "6.0.2", '
          '"status": "built", "seconds": %s}')
DEEP = "[" * 5000 + "]" * 5000
LAB = "version: 1\nlocks: locks\nboards:\n  - id: b1\n    virtual: {chip: esp32c3, flash: 16MB}\n    variant: c3\n"


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose IHDR says width×height (8-bit palette) with a valid, tiny IDAT stream of the first rows: the
    header is what a bound must judge (decoding it would take width×height×4 bytes)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)
    rows = zlib.compress(b"\0" * (width + 1) * 4)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"PLTE", b"\0\0\0") + chunk(b"IDAT", rows) + \
        chunk(b"IEND", b"")


def gif_frames(count: int) -> bytes:
    """A 1×1 GIF89a with ``count`` frames (GIF89a spec: header, logical screen, global colour table, then per
    frame a graphic control extension, an image descriptor and LZW data clear,0,end at code size 3)."""
    head = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff"
    loop = b"\x21\xff\x0bNETSCAPE2.0\x03\x01\0\0\0"
    frame = b"\x21\xf9\x04\x00\x0a\x00\x00\x00" + b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + \
        b"\x02\x02\x44\x01\x00"
    return head + loop + frame * count + b"\x3b"


def container(members: list[tuple[str, bytes]]) -> bytes:
    from assets_gen.container import pack_container  # builds the hostile input; the judge is the CLI's reply

    return pack_container(members)


# (id, files, argv, stderr regex) — every row must exit 1 without a traceback
CASES: list[tuple[str, dict[str, Any], list[str], str]] = [
    ("results-merge-list-line", {"r.jsonl": "[1,2,3]\n"}, ["matrix", "results", "merge", "{d}/r.jsonl"],
     r"r\.jsonl:1: a build record: expected an object"),
    ("matrix-merge-list-line", {"r.jsonl": "[1,2,3]\n"}, ["matrix", "merge", "{d}/r.jsonl", "-o", "{d}/m.json"],
     r"r\.jsonl:1: a build record: expected an object"),
    ("results-merge-numeric-full-name", {"r.jsonl": RECORD.replace('"v1"', "5", 1) % 1 + "\n"},
     ["matrix", "results", "merge", "{d}/r.jsonl"], r"r\.jsonl:1: full_name: expected a string, got 5"),
    ("matrix-merge-numeric-full-name", {"r.jsonl": RECORD.replace('"v1"', "5", 1) % 1 + "\n"},
     ["matrix", "merge", "{d}/r.jsonl", "-o", "{d}/m.json"], r"r\.jsonl:1: full_name: expected a string"),
    ("results-merge-seconds-string-nan", {"r.jsonl": "\n" + RECORD % '"NaN"' + "\n"},
     ["matrix", "results", "merge", "{d}/r.jsonl", "--junit", "{d}/j.xml"],
     r"r\.jsonl:2: seconds: expected a number"),
    ("results-merge-seconds-nan-literal", {"r.jsonl": RECORD % "NaN" + "\n"},
     ["matrix", "results", "merge", "{d}/r.jsonl", "--junit", "{d}/j.xml"], r"r\.jsonl:1:\d+: NaN is not a JSON"),
    ("results-merge-seconds-infinity", {"r.jsonl": RECORD % "Infinity" + "\n"},
     ["matrix", "results", "merge", "{d}/r.jsonl", "--junit", "{d}/j.xml"], r"r\.jsonl:1:\d+: Infinity is not"),
    ("results-merge-seconds-overflow", {"r.jsonl": RECORD % "1e999" + "\n"},
     ["matrix", "results", "merge", "{d}/r.jsonl", "--junit", "{d}/j.xml"], r"r\.jsonl:1:\d+: number 1e999 is out"),
    ("results-merge-deep-nesting", {"r.jsonl": DEEP + "\n"}, ["matrix", "results", "merge", "{d}/r.jsonl"],
     r"r\.jsonl:1: nests deeper than 64 levels"),
    ("matrix-merge-deep-nesting", {"r.jsonl": DEEP + "\n"}, ["matrix", "merge", "{d}/r.jsonl", "-o", "{d}/m.json"],
     r"r\.jsonl:1: nests deeper than 64 levels"),
    ("matrix-merge-deep-matrix-file", {"r.jsonl": RECORD % 1 + "\n", "m.json": DEEP},
     ["matrix", "merge", "{d}/r.jsonl", "--matrix", "{d}/m.json", "-o", "{d}/out.json"],
     r"m\.json:1: nests deeper than 64 levels"),
    ("matrix-merge-matrix-job-not-object", {"r.jsonl": RECORD % 1 + "\n", "m.json": '{"include": [1]}'},
     ["matrix", "merge", "{d}/r.jsonl", "--matrix", "{d}/m.json", "-o", "{d}/out.json"],
     r"m\.json:1:1: include\[0\]: expected an object"),
    ("selection-entry-without-full-name", {"s.json": '{"variants": [{"name": "x"}]}'},
     ["matrix", "build", "--selection", "{d}/s.json", "--relative-urls"], r"s\.json:1:1: variants\[0\]\.full_name"),
    ("cost-history-nan", {"h.json": '{"v1": NaN}'}, ["matrix", "list", "--boards", str(REPO / "boards"),
                                                      "--shard", "1/2", "--cost-history", "{d}/h.json"], r"h\.json:1:\d+: NaN is not a JSON number"),
    ("release-json-deep", {"dist/v1/release.json": DEEP}, ["release", "site", "--dist", "{d}/dist", "-o",
                                                            "{d}/site", "--boards", "{d}/nb"], r"release\.json:1: nests deeper than 64"),
    ("release-json-nan", {"dist/v1/release.json": '{"full_name": "v1", "app_size": NaN}'},
     ["release", "site", "--dist", "{d}/dist", "-o", "{d}/site", "--boards", "{d}/nb"], r"release\.json:1:\d+: NaN is not a JSON number"),
    ("hil-results-deep", {"dist/v1/release.json": '{"full_name": "v1"}', "h.jsonl": DEEP + "\n"},
     ["release", "site", "--dist", "{d}/dist", "-o", "{d}/site", "--hil", "{d}/h.jsonl", "--boards", "{d}/nb"],
     r"h\.jsonl:1: nests deeper than 64 levels"),
    ("hil-lock-huge-lease", {"lab.yaml": LAB}, ["hil", "lock", "b1", "--lab", "{d}/lab.yaml", "--for", "99999999999d"],
     r"--for '99999999999d': a lease lasts 1 s to 7 days"),
    ("hil-lock-zero-lease", {"lab.yaml": LAB}, ["hil", "lock", "b1", "--lab", "{d}/lab.yaml", "--for", "0"],
     r"--for '0': a lease lasts 1 s to 7 days"),
    ("hil-lock-negative-lease", {"lab.yaml": LAB}, ["hil", "lock", "b1", "--lab", "{d}/lab.yaml", "--for", "-5m"],
     r"--for '-5m': use a number of seconds"),
    ("lab-id-trailing-newline", {"lab.yaml": 'version: 1\nlocks: locks\nboards:\n  - id: "b1\\n"\n'
                                             "    virtual: {chip: esp32c3, flash: 16MB}\n    variant: c3\n"},
     ["hil", "boards", "--lab", "{d}/lab.yaml"], r"lab\.yaml:4:\d+: .*does not match"),
    ("emoji-13000-square-png", {"em/happy.png": png_header_only(13000, 13000)},
     ["assets", "build", "-o", "{d}/a.bin", "--emoji-dir", "{d}/em"],
     r"happy\.png: image is 13000×13000 = 169,000,000 pixels; the bound is 16,777,216"),
    ("emoji-10000-frame-gif", {"em/happy.gif": gif_frames(10_000)},
     ["assets", "build", "-o", "{d}/a.bin", "--emoji-dir", "{d}/em"],
     r"happy\.gif: animation has more than 1000 frames"),
    ("background-13000-square-png", {"bg.png": png_header_only(13000, 13000)},
     ["assets", "build", "-o", "{d}/a.bin", "--background", "{d}/bg.png", "--display", "320x240"],
     r"bg\.png: image is 13000×13000 .* the bound is 16,777,216"),
]


def _write(root: Path, files: dict[str, Any]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


@pytest.mark.parametrize(("files", "argv", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, Any],
                                  argv: list[str], expected: str) -> None:
    _write(tmp_path, files)
    code, _out, err = run_cli([a.replace("{d}", str(tmp_path)) for a in argv], capsys)
    assert_clean_failure(code, err, expected)
    assert not (tmp_path / "j.xml").exists() and not (tmp_path / "m.json").exists() or "m.json" in files
    assert not (tmp_path / "site").exists() and not (tmp_path / "a.bin").exists()
    assert not (tmp_path / "locks").exists() or list((tmp_path / "locks").iterdir()) == []  # no lease taken


def test_a_good_gif_under_the_frame_bound_is_packed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The GIF writer above makes files the firmware's decoder and Pillow read: 12 frames pack fine."""
    _write(tmp_path, {"em/happy.gif": gif_frames(12)})
    code, _out, err = run_cli(["assets", "build", "-o", str(tmp_path / "a.bin"), "--emoji-dir",
                               str(tmp_path / "em")], capsys)
    assert code == 0, err
    assert (tmp_path / "a.bin").is_file()


def test_junit_never_carries_nan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A finite record merges; the JUnit written is XML whose every time attribute is a finite number."""
    import math
    import xml.etree.ElementTree as ET

    (tmp_path / "r.jsonl").write_text(RECORD % 12.5 + "\n")
    code, _out, err = run_cli(["matrix", "results", "merge", str(tmp_path / "r.jsonl"), "--junit",
                               str(tmp_path / "j.xml")], capsys)
    assert code == 0, err
    times = [float(e.get("time", "0")) for e in ET.parse(tmp_path / "j.xml").iter() if e.get("time") is not None]
    assert times and all(math.isfinite(t) for t in times) and 12.5 in times


def test_a_200mb_csv_line_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """The partition CSV is read a line at a time: a 200 MB line is refused at 4 KiB, under a 600 MB address
    space limit (reading it whole took 635 MB)."""
    path = tmp_path / "p.csv"
    with open(path, "wb") as fh:
        block = b"x" * (1 << 20)
        for _ in range(200):
            fh.write(block)
        fh.write(b"\n")
    proc = run_child(["partitions", "check", str(path)], tmp_path, limit_kb=600_000, timeout=60)
    assert_clean_failure(proc.returncode, proc.stderr, r"p\.csv:1: line is longer than 4096 bytes")


def test_a_13000_square_png_is_refused_before_decoding(tmp_path: Path) -> None:
    """Under a 600 MB address-space limit the emoji check answers from the PNG header (decoding 13000² RGBA
    needs 676 MB for the pixels alone)."""
    _write(tmp_path, {"em/happy.png": png_header_only(13000, 13000)})
    proc = run_child(["assets", "build", "-o", str(tmp_path / "a.bin"), "--emoji-dir", str(tmp_path / "em")],
                     tmp_path, limit_kb=600_000, timeout=60)
    assert_clean_failure(proc.returncode, proc.stderr, r"image is 13000×13000 .* the bound is 16,777,216")


HERE = socket.gethostname()
LEASE = '{"board": "b1", "holder": "h", "host": "%s", "pid": %s, "run": "r", "acquired": 0, "expires": %s}'


@pytest.mark.parametrize("lease", [LEASE % ("x", "null", '"soon"'), DEEP, LEASE % (HERE, "99999999999999999999", 4e9),
                                   LEASE % ("x", "null", "NaN")], ids=["expires-string", "deep", "pid-huge",
                                                                      "expires-nan"])
def test_a_damaged_lease_file_counts_as_free(tmp_path: Path, capsys: pytest.CaptureFixture[str], lease: str) -> None:
    """Lease files sit in a directory every lab user writes; one that is not a lease (docs/lab.md: JSON with
    holder, host, pid, run, acquired, expires) must not break `hil lock` for everyone."""
    _write(tmp_path, {"lab.yaml": LAB, "locks/b1.lease": lease})
    code, out, err = run_cli(["hil", "lock", "b1", "--lab", str(tmp_path / "lab.yaml"), "--for", "1m"], capsys)
    assert code == 0 and "Traceback" not in err, err
    assert out.startswith("locked b1 leased by")


@pytest.mark.parametrize(("index", "finding"), [
    (DEEP, "index.json line 1: nests deeper than 64 levels"),
    ('{"version": 1, "emoji_collection": NaN}', "NaN is not a JSON number"),
], ids=["deep-index", "nan-index"])
def test_assets_inspect_reports_a_hostile_index(tmp_path: Path, capsys: pytest.CaptureFixture[str], index: str,
                                                finding: str) -> None:
    """A bundle's index.json is read by the firmware's cJSON, which has no NaN either; inspect reports it as a
    finding of the bundle (exit 1), never a traceback."""
    (tmp_path / "a.bin").write_bytes(container([("index.json", index.encode())]))
    code, out, err = run_cli(["assets", "inspect", str(tmp_path / "a.bin")], capsys)
    assert_clean_failure(code, err, r"a\.bin: 1 problem\(s\)")
    assert finding in out, out
