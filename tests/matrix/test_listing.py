"""`list_variants` / `matrix list` against upstream's own `--list-boards --json` output."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from xzbuild.cli.main import cli
from xzbuild.core.errors import UserError
from xzbuild.matrix import Status, list_variants
from xzbuild.matrix.listing import summarize


@pytest.fixture(scope="module")
def golden(shared_fixtures: Path) -> list[dict[str, object]]:
    return json.loads((shared_fixtures / "upstream" / "list-boards-idf-6.0.2.json").read_text(encoding="utf-8"))


def test_records_equal_upstream_listing_record_for_record(board_set, golden) -> None:  # type: ignore[no-untyped-def]
    records = [e.to_upstream_record() for e in list_variants(board_set, "6.0.2") if e.enabled]
    assert len(records) == len(golden) == 174
    for ours, theirs in zip(records, golden, strict=True):
        assert list(ours) == list(theirs)  # same keys, same order
        assert ours == theirs, ours["full_name"]


def test_cli_json_is_byte_compatible(repo_root: Path, golden, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XZBUILD_NO_CACHE", "1")
    result = CliRunner().invoke(cli, ["matrix", "list", "--json", "--idf-version", "6.0.2",
                                      "--boards", str(repo_root / "boards")])
    assert result.exit_code == 0, result.output
    # upstream prints json.dumps(list): one line, default separators, \uXXXX escapes
    assert result.output == json.dumps(golden) + "\n"


def test_idf_61_adds_exactly_the_two_s31_variants(board_set) -> None:  # type: ignore[no-untyped-def]
    at_602 = {e.full_name for e in list_variants(board_set, "6.0.2") if e.enabled}
    entries_61 = list_variants(board_set, "6.1")
    at_61 = {e.full_name for e in entries_61 if e.enabled}
    added = at_61 - at_602
    assert sorted(added) == ["espressif-esp32-s31-function-coreboard-1", "espressif-esp32-s31-korvo-1"]
    assert {e.target for e in entries_61 if e.full_name in added} == {"esp32s31"}
    assert at_602 <= at_61 and len(at_61) == 176
    # m5stack-corep4 is "<6.0": excluded at 6.1 too, with the reason
    assert [(e.full_name, e.status, e.reason) for e in entries_61 if not e.enabled] == [
        ("m5stack-corep4", Status.DISABLED, "requires IDF < 6.0")]


def test_excluded_variants_carry_status_and_reason(board_set) -> None:  # type: ignore[no-untyped-def]
    disabled = {e.full_name: e.reason for e in list_variants(board_set, "6.0.2") if not e.enabled}
    assert disabled == {
        "espressif-esp32-s31-function-coreboard-1": "requires IDF >= 6.1",
        "espressif-esp32-s31-korvo-1": "requires IDF >= 6.1",
        "m5stack-corep4": "requires IDF < 6.0",
    }
    at_554 = {e.full_name for e in list_variants(board_set, "v5.5.4") if e.enabled}
    assert "m5stack-corep4" in at_554 and "m5stack-corep4x" not in at_554 and len(at_554) == 174


def test_p4_p4x_pairs_are_expanded(board_set, golden) -> None:  # type: ignore[no-untyped-def]
    entries = [e for e in list_variants(board_set, "6.0.2", board="waveshare/esp32-p4-wifi6-touch-lcd")]
    assert len(entries) == 18 == sum(1 for r in golden if r["board"] == "waveshare/esp32-p4-wifi6-touch-lcd")
    assert Counter(e.chip_variant for e in entries) == {"p4": 9, "p4x": 9}


def test_filters_and_unknown_values(board_set) -> None:  # type: ignore[no-untyped-def]
    c3 = list_variants(board_set, "6.0.2", target="esp32c3")
    assert c3 and {e.target for e in c3} == {"esp32c3"}
    with pytest.raises(UserError, match="did you mean esp32c3"):
        list_variants(board_set, target="esp32c33")
    with pytest.raises(UserError, match="did you mean"):
        list_variants(board_set, board="waveshare/esp32-p4-nan")
    with pytest.raises(UserError, match="expected an ESP-IDF version"):
        list_variants(board_set, idf="six")


def test_summary_counts_are_computed(board_set, golden) -> None:  # type: ignore[no-untyped-def]
    rows = summarize(list_variants(board_set, "6.0.2"))
    assert sum(r[1] for r in rows) == len(golden)
    by_target = {r[0]: r[1] for r in rows}
    assert by_target == dict(Counter(str(r["target"]) for r in golden)) | {"esp32s31": 0}
    assert {r[0]: r[3] for r in rows if r[3]} == {"esp32s31": 2, "esp32p4": 1}


def test_table_output_groups_by_target_with_totals(repo_root: Path) -> None:
    result = CliRunner().invoke(cli, ["matrix", "list", "--target", "esp32c5", "--boards", str(repo_root / "boards")])
    assert result.exit_code == 0, result.output
    assert "esp32c5 (4 variants)" in result.output
    assert "total" in result.output and "esp32s3" not in result.output


@pytest.mark.parametrize("how", ["--no-cache", "XZBUILD_NO_CACHE"])
def test_listing_writes_no_cache_when_disabled(tmp_path: Path, repo_root: Path, monkeypatch, how: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("XZBUILD_NO_CACHE", raising=False)
    if how == "XZBUILD_NO_CACHE":
        monkeypatch.setenv("XZBUILD_NO_CACHE", "1")
    boards = tmp_path / "boards"
    shutil.copytree(repo_root / "boards", boards)
    args = ["matrix", "list", "--json", "--board", "bread-compact-wifi", "--boards", str(boards)]
    result = CliRunner().invoke(cli, [*args, "--no-cache"] if how == "--no-cache" else args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["board"] == "bread-compact-wifi"
    assert not (tmp_path / ".xzbuild-cache").exists()


def test_cache_hits_and_invalidates(tmp_path: Path, repo_root: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("XZBUILD_NO_CACHE", raising=False)
    boards = tmp_path / "boards"
    shutil.copytree(repo_root / "boards", boards)
    args = ["matrix", "list", "--json", "--board", "bread-compact-wifi", "--boards", str(boards)]  # cache: default
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    cached = list((tmp_path / ".xzbuild-cache" / "matrix").glob("list-*.json"))
    assert len(cached) == 1
    assert CliRunner().invoke(cli, args).output == first.output
    # Editing a board file must miss the cache and show the edit.
    board_file = boards / "bread-compact-wifi.yaml"
    board_file.write_text(board_file.read_text(encoding="utf-8").replace("Bread Compact Wi-Fi", "Bread Compact WiFi X"),
                          encoding="utf-8")
    third = CliRunner().invoke(cli, args)
    assert third.exit_code == 0, third.output
    assert "WiFi X" in third.output and third.output != first.output
