"""Result records, shard merging, JUnit XML, first-error extraction and the progress display."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from xzbuild.builder.results import (
    BuildRecord,
    BuildStatus,
    junit_xml,
    merge_records,
    read_records,
    write_records,
)
from xzbuild.builder.runner import first_error
from xzbuild.cli._progress import BuildProgress, summary_table
from xzbuild.core.errors import UserError


def rec(name: str, status: BuildStatus, **kw: object) -> BuildRecord:
    return BuildRecord(full_name=name, board="b", name=name, target="esp32s3", idf="6.0.2", status=status,
                       **kw)  # type: ignore[arg-type]


def test_records_round_trip_sorted(tmp_path: Path) -> None:
    records = [rec("b", BuildStatus.FAILED, reason="idf.py exited 2", error="x.cc:1:2: error: y"),
               rec("a", BuildStatus.BUILT, seconds=1.23456, app_size=1000, artifacts={"dir": "a"})]
    write_records(tmp_path / "r.jsonl", records)
    text = (tmp_path / "r.jsonl").read_text()
    assert text.splitlines()[0].startswith('{"app_partition_size": null, "app_size": 1000')
    back = read_records(tmp_path / "r.jsonl")
    assert [r.full_name for r in back] == ["a", "b"] and back[0].seconds == 1.235
    assert back[1].status is BuildStatus.FAILED and back[1].error == "x.cc:1:2: error: y"
    (tmp_path / "bad.jsonl").write_text('{"full_name": "x"}\n')
    with pytest.raises(UserError, match=r"bad.jsonl:1: not a build record"):
        read_records(tmp_path / "bad.jsonl")


def test_merge_most_final_status_wins() -> None:
    first = [rec("a", BuildStatus.FAILED), rec("b", BuildStatus.SKIPPED), rec("c", BuildStatus.BUILT)]
    rerun = [rec("a", BuildStatus.BUILT), rec("b", BuildStatus.FAILED), rec("c", BuildStatus.CACHED)]
    merged = {r.full_name: r.status for r in merge_records([first, rerun])}
    assert merged == {"a": BuildStatus.BUILT, "b": BuildStatus.FAILED, "c": BuildStatus.BUILT}


def test_junit_xml_parses() -> None:
    xml = junit_xml([rec("ok", BuildStatus.BUILT, seconds=2.0),
                     rec("bad", BuildStatus.FAILED, reason="idf.py exited 2", error="a.cc:1:1: error: <&>"),
                     rec("off", BuildStatus.DISABLED, reason="requires IDF >= 6.1")])
    suite = ET.fromstring(xml).find("testsuite")
    assert suite is not None and suite.get("tests") == "3" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failure = cases["bad"].find("failure")
    assert failure is not None and failure.text == "a.cc:1:1: error: <&>"
    skipped = cases["off"].find("skipped")
    assert skipped is not None and skipped.get("message") == "requires IDF >= 6.1"


@pytest.mark.parametrize("log, expected", [
    ("[1/9] CXX a.o\n../main/a.cc:12:3: warning: w\n../main/a.cc:40:7: error: 'x' was not declared\nmore\n",
     "../main/a.cc:40:7: error: 'x' was not declared"),
    ("ld: main.o: in function `f':\nmain.cc:(.text+0x1): undefined reference to `g'\n",
     "main.cc:(.text+0x1): undefined reference to `g'"),
    ("-- Configuring\nCMake Error at main/CMakeLists.txt:10 (message):\n  bad\n",
     "CMake Error at main/CMakeLists.txt:10 (message):"),
    ("something\nwent wrong at the end\n", "went wrong at the end"),
    ("", None),
])
def test_first_error(log: str, expected: str | None) -> None:
    assert first_error(log) == expected


def test_progress_lines_eta_and_live_render() -> None:
    out = io.StringIO()
    progress = BuildProgress(3, jobs=2, stream=out, live=False)
    progress.start("a")
    progress.state("a", "building")
    assert progress.eta() is None
    progress.finish(rec("a", BuildStatus.BUILT, seconds=4.0))
    assert progress.eta() == 4.0  # 2 left x 4 s / 2 jobs
    progress.finish(rec("b", BuildStatus.FAILED, seconds=1.0, reason="idf.py exited 2"))
    assert out.getvalue().splitlines() == ["[1/3] built    a (4.0s)", "[2/3] failed   b (1.0s) — idf.py exited 2"]
    progress.start("c")
    from rich.console import Console

    console = Console(file=io.StringIO(), width=100)
    console.print(progress._render())
    rendered = console.file.getvalue()  # type: ignore[attr-defined]
    assert "2/3 done" in rendered and "ETA 2s" in rendered and "c" in rendered and "configuring" in rendered
    table = io.StringIO()
    summary_table([rec("a", BuildStatus.BUILT, seconds=4.0, app_size=70000, app_partition_size=4128768),
                   rec("b", BuildStatus.FAILED, reason="idf.py exited 2", error="x.cc:1:1: error: e")], table)
    assert "x.cc:1:1: error: e" in table.getvalue() and "68K/4032K" in table.getvalue()


def test_junit_is_valid_junit10_for_every_status(tmp_path: Path) -> None:
    """Jenkins' junit-10.xsd accepts the file, and junitparser reads each status back (no <properties> in cases)."""
    from tests.junit_schema import load_cases

    records = [rec(f"v-{s}", s, seconds=1.5, reason=None if s.ok else f"why {s}", error="e <&> \"q\"",
                   log=f"logs/v-{s}.log") for s in BuildStatus]
    path = tmp_path / "junit.xml"
    path.write_text(junit_xml(records))
    cases = load_cases(path)
    assert set(cases) == {f"v-{s}" for s in BuildStatus}
    outcome = {name: [type(r).__name__ for r in case.result] for name, case in cases.items()}
    assert outcome == {"v-built": [], "v-cached": [], "v-failed": ["Failure"], "v-skipped": ["Skipped"],
                       "v-disabled": ["Skipped"]}
    assert cases["v-cached"].system_out == "status: cached\nlog: logs/v-cached.log"
    assert cases["v-failed"].result[0].message == "why failed"


def test_conform_makes_pytest_junit_valid(tmp_path: Path) -> None:
    """A real pytest run with record_property/record_xml_attribute (what pytest-embedded uses) is invalid as
    written; xzbuild.junitxml.conform moves those facts to the suite and the file validates."""
    import subprocess
    import sys

    from tests.junit_schema import load_cases, schema_errors
    from xzbuild.junitxml import conform

    (tmp_path / "test_x.py").write_text(
        "def test_a(record_property, record_xml_attribute):\n"
        "    record_property('dut', 'vb1')\n    record_xml_attribute('target', 'esp32s3')\n"
        "def test_b():\n    assert False\n")
    raw = tmp_path / "raw.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:labgrid", "-o", "addopts=",
                    "-o", "junit_family=xunit1", "-W", "ignore", f"--junitxml={raw}", str(tmp_path / "test_x.py")],
                   cwd=tmp_path, capture_output=True, check=False)
    assert any("properties" in e or "target" in e for e in schema_errors(raw))  # the problem is real
    root = ET.parse(raw).getroot()
    for suite in [root] if root.tag == "testsuite" else list(root):
        conform(suite)
    fixed = tmp_path / "fixed.xml"
    ET.ElementTree(root).write(fixed, encoding="unicode")
    cases = load_cases(fixed)
    assert set(cases) == {"test_a", "test_b"} and type(cases["test_b"].result[0]).__name__ == "Failure"
    props = {p.get("name"): p.get("value") for p in ET.parse(fixed).getroot().iter("property")}
    assert {"test_a.dut": "vb1", "test_a.target": "esp32s3"}.items() <= props.items()
