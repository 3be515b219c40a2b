"""`xzbuild boards` commands on the committed tree, one-line errors, and the JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.model.factory import make_board_tree
from xzbuild.cli.main import main
from xzbuild.model.loader import board_files
from xzbuild.model.schema import board_schema


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_check_prints_counts(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["boards", "check", "--boards", str(repo_root / "boards")], capsys)
    assert code == 0
    assert "148 board files (146 with config.json), 177 variants" in out


def test_list_json_and_table(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["boards", "list", "--json", "--boards", str(repo_root / "boards"), "--idf-version", "6.0.2"], capsys)
    records = json.loads(out)
    assert code == 0 and len(records) == 174
    first = records[0]
    assert {"board", "name", "full_name", "type", "target", "config", "display_name"} <= set(first)
    code, out, err = run(["boards", "list", "--boards", str(repo_root / "boards")], capsys)
    assert code == 0 and len(out.splitlines()) == 177 and "177 variants" in err


def test_show_board_and_variant(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["boards", "show", "--boards", str(repo_root / "boards"), "waveshare/esp32-p4-nano"], capsys)
    assert code == 0 and "type:         esp32-p4-nano" in out and "[p4x]" in out
    code, out, _ = run(["boards", "show", "--boards", str(repo_root / "boards"), "bread-compact-wifi-128x64"], capsys)
    assert code == 0 and "board:        bread-compact-wifi" in out


def test_unknown_board_is_one_line(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["boards", "show", "--boards", str(repo_root / "boards"), "bread-compact-wfi"], capsys)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "did you mean" in err and "Traceback" not in err


def test_stats_reports_structured_share(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["boards", "stats", "--json", "--boards", str(repo_root / "boards")], capsys)
    data = json.loads(out)
    assert code == 0 and data["macro_instances"] == 5173 and data["variants"] == 177
    assert data["structured_share"] >= 0.8


def test_check_errors_exit_1_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    boards = make_board_tree(tmp_path)
    (boards / "demo-wifi.yaml").write_text("version: [\n")
    p4 = boards / "acme" / "p4-board.yaml"
    p4.write_text(p4.read_text().replace("    builtin: 48", '    builtin: "GPIO 48"'))
    code, out, err = run(["boards", "check", "--boards", str(boards)], capsys)
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == 2 and "Traceback" not in err
    assert lines[0].endswith('p4-board.yaml:24:14: hardware.leds.builtin: expected a GPIO number, NC, -1 or a '
                             'C constant name, got "GPIO 48"')
    assert "demo-wifi.yaml:1:10: invalid YAML: " in lines[1] and lines[1].endswith("; fix the syntax at this position")


def test_committed_schema_is_current_and_files_conform(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = board_schema()
    committed = json.loads((repo_root / "boards" / "board.schema.json").read_text())
    assert committed == schema
    code, out, _ = run(["boards", "schema"], capsys)
    assert code == 0 and json.loads(out) == schema
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for path in board_files(repo_root / "boards"):
        text = path.read_text(encoding="utf-8")
        assert text.startswith("# yaml-language-server: $schema="), path
        errors = list(validator.iter_errors(yaml.safe_load(text)))
        assert not errors, (path, errors[0].message)


def test_schema_rejects_what_the_loader_rejects(tmp_path: Path) -> None:
    validator = jsonschema.Draft202012Validator(board_schema())
    good = yaml.safe_load((make_board_tree(tmp_path) / "demo-wifi.yaml").read_text())
    assert not list(validator.iter_errors(good))
    bad = json.loads(json.dumps(good))
    bad["hardware"]["display"]["width"] = "240px"
    bad["variants"][0]["release_name"] = "x"
    assert len(list(validator.iter_errors(bad))) == 2


@pytest.mark.parametrize(("text", "expected"), [
    ("version: [\n", ":1:10: invalid YAML"),
    ("type: x\ntarget: esp32s9\n", ":2:9: target: unknown target \"esp32s9\""),
])
def test_check_named_files_outside_the_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                            expected: str) -> None:
    path = tmp_path / "draft.yaml"
    path.write_text(text)
    code, _, err = run(["boards", "check", str(path)], capsys)
    assert code == 1 and "Traceback" not in err
    assert err.startswith(str(path)) and expected in err and len(err.strip().splitlines()) == 1


def test_check_json_reports_counts_and_located_errors(repo_root: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`boards check --json`: the counts of the tree (board files as on disk), and for bad files each error with
    its file, line and column (the places in the YAML text), exit 1 and the same lines on stderr."""
    code, out, _ = run(["boards", "check", "--json", "--boards", str(repo_root / "boards")], capsys)
    report = json.loads(out)
    on_disk = [p for p in (repo_root / "boards").rglob("*.yaml") if not p.name.startswith("_")]
    assert code == 0 and report["ok"] is True and report["errors"] == []
    assert report["boards"] == len(on_disk) and report["variants"] >= report["boards"]
    draft = tmp_path / "draft.yaml"
    draft.write_text("type: x\ntarget: esp32s9\n")
    code, out, err = run(["boards", "check", "--json", str(draft), str(tmp_path / "missing.yaml")], capsys)
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and "Traceback" not in err
    located = {(e["file"], e["line"], e["column"]) for e in report["errors"]}
    assert (str(draft), 2, 9) in located and (str(tmp_path / "missing.yaml"), 0, 0) in located, report
    assert len(err.strip().splitlines()) == len(report["errors"])
    for e in report["errors"]:
        assert e["message"] and e["message"] in err


def test_check_named_files_in_the_tree(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    board = repo_root / "boards" / "bread-compact-wifi.yaml"
    code, out, _ = run(["boards", "check", "--boards", str(repo_root / "boards"), str(board)], capsys)
    assert code == 0 and "ok: 1 board file(s)" in out
    code, _, err = run(["boards", "check", str(repo_root / "boards" / "missing.yaml")], capsys)
    assert code == 1 and "no such board file" in err


# Hostile edits of tests/hostile/test_board_injection.py the schema cannot see: C replacement text and raw
# config.h blocks, whose C syntax (literals, comments, directives) only the loader scans.
C_TEXT_ONLY_THE_LOADER_SCANS = {"define-value-include", "define-value-line-splice", "raw-include", "raw-conditional",
                                "raw-trailing-backslash"}
# Rows of tests/model/test_validation_table.py that break a rule of the file alone (the others are rules between
# files, of the firmware facts or of the pins, or YAML syntax).
PER_FILE_CASES = {"bad-width", "unknown-top-key", "unknown-part-field", "unknown-part", "bad-macro-spelling",
                  "type-regex", "variant-name-regex", "config-prefix", "bool-sdkconfig", "release-name-key",
                  "bad-idf-version", "bad-text-font", "cjk-label", "stale-label-word", "p4x-on-wrong-target",
                  "config-h-unknown-item", "config-h-bad-branch", "acknowledged-pins-shape", "width-negative",
                  "width-huge", "volume-over-100"}


def test_schema_refuses_the_hostile_and_invalid_examples(repo_root: Path, tmp_path: Path) -> None:
    """The outside reference for the schema: the hand-written tables of refused board files."""
    from tests.hostile.test_board_injection import BOARD, INJECTIONS
    from tests.model.test_validation_table import CASES

    validator = jsonschema.Draft202012Validator(board_schema())
    base = yaml.safe_load((repo_root / "boards" / f"{BOARD}.yaml").read_text(encoding="utf-8"))
    assert validator.is_valid(base)
    accepted = []
    for name, edit, _, _ in INJECTIONS:
        doc = json.loads(json.dumps(base))
        edit(doc)
        if validator.is_valid(doc):
            accepted.append(name)
    assert sorted(accepted) == sorted(C_TEXT_ONLY_THE_LOADER_SCANS)
    boards = make_board_tree(tmp_path, repo_root)
    rows = [row for row in CASES if row[0] in PER_FILE_CASES]
    assert len(rows) == len(PER_FILE_CASES)
    for name, file, old, new, _ in rows:
        doc = yaml.safe_load((boards / file).read_text(encoding="utf-8").replace(old, new, 1))
        assert not validator.is_valid(doc), name
