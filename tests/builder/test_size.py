"""`xzbuild matrix size` between two stand-in releases whose apps differ.

Outside references: the image files on disk (their sizes), the ESP image header layout (spec: segment count
at byte 1, then address/length pairs) read here by hand, and markdown-it's GFM table rendering.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.builder.firmware import make_project, standin_env
from xzbuild.cli.main import main

BOARDS = ["bread-compact-wifi.yaml", "waveshare/esp32-c6-touch-amoled-2.06.yaml", "xmini/c3-v3.yaml"]


def _build(root: Path, boards: Path, firmware: Path, out: Path, monkeypatch: pytest.MonkeyPatch,
           **knobs: str) -> None:
    for key in [k for k in os.environ if k.startswith("XZ_STANDIN_")]:
        monkeypatch.delenv(key)
    for key, value in standin_env(root / f"{out.name}.log", **knobs).items():
        monkeypatch.setenv(key, value)
    assert main(["matrix", "build", "--all", "--boards", str(boards), "--firmware", str(firmware), "--out",
                 str(out), "--cache-dir", str(root / f"cache-{out.name}"), "--jobs", "2", "--relative-urls"]) == 0


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("size")
    boards, firmware = make_project(root, BOARDS)
    with pytest.MonkeyPatch.context() as mp:
        _build(root, boards, firmware, root / "base", mp)
        # The wifi board's app grows by about 300 kB; everything else is built from the same inputs.
        _build(root, boards, firmware, root / "head", mp, XZ_STANDIN_APP_SIZE="bread-compact-wifi=900000")
    return root / "base", root / "head"


def _app_files(out: Path) -> dict[str, Path]:
    manifest = json.loads((out / "manifest.json").read_text())
    return {v["full_name"]: out / next(f["path"] for f in v["files"] if f["role"] == "app")
            for v in manifest["variants"]}


def _segment_bytes(image: bytes) -> int:
    """Bytes of all loadable segments (padding segments, load address 0, excluded)."""
    count, pos, total = image[1], 24, 0
    for _ in range(count):
        addr = int.from_bytes(image[pos:pos + 4], "little")
        length = int.from_bytes(image[pos + 4:pos + 8], "little")
        total += length if addr else 0
        pos += 8 + length
    return total


def test_deltas_equal_the_image_files_size_differences(releases: tuple[Path, Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    base, head = releases
    assert main(["matrix", "size", "--base", str(base), str(head), "--json"]) == 0
    rows = {r["full_name"]: r for r in json.loads(capsys.readouterr().out)["variants"]}
    base_files, head_files = _app_files(base), _app_files(head)
    assert set(rows) == set(head_files) and len(rows) >= 4
    for name, row in rows.items():
        expected = head_files[name].stat().st_size - base_files[name].stat().st_size
        assert row["delta"] == expected, name
        assert row["size"] == head_files[name].stat().st_size
        assert row["free"] == row["slot"] - row["size"]
        regions = {k: v["size"] for k, v in row["regions"].items()}
        assert sum(regions.values()) == _segment_bytes(head_files[name].read_bytes()), name
    grown = {n for n, r in rows.items() if r["delta"] > 0}
    assert grown and all(n.startswith("bread-compact-wifi") for n in grown)
    for name in grown:
        assert rows[name]["regions"]["flash_code"]["delta"] > 200_000  # the padding is code


def test_fail_above_names_exactly_the_grown_variants(releases: tuple[Path, Path],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    base, head = releases
    assert main(["matrix", "size", "--base", str(base / "manifest.json"), str(head), "--fail-above", "5"]) == 1
    err = capsys.readouterr().err
    base_files, head_files = _app_files(base), _app_files(head)
    grown = sorted(n for n, f in head_files.items() if f.stat().st_size > base_files[n].stat().st_size * 1.05)
    assert grown
    named = sorted(part.split(" grew ")[0].strip() for part in err.split("--fail-above 5.0: ", 1)[1].split(";"))
    assert named == grown
    assert main(["matrix", "size", "--base", str(base), str(head), "--fail-above", "100000"]) == 0


def test_min_free_names_tight_slots(releases: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, head = releases
    assert main(["matrix", "size", "--base", str(base), str(head), "--min-free", "100"]) == 1
    assert "of its slot free" in capsys.readouterr().err


def test_markdown_renders_as_a_table_grown_first(releases: tuple[Path, Path],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    base, head = releases
    assert main(["matrix", "size", "--base", str(base), str(head), "--format", "markdown"]) == 0
    html = MarkdownIt("commonmark").enable("table").render(capsys.readouterr().out)
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]  # the size table (per-component rows follow)
    rows = body.count("<tr>")
    assert rows == len(_app_files(head))
    first = body.split("<tr>", 2)[1]
    assert "bread-compact-wifi" in first and "+" in first


def test_missing_manifest_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "size", "--base", str(tmp_path), str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "manifest.json" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
