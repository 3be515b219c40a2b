"""`xzbuild hil run` reports the protocol deviations the reference server tolerated: a virtual board built to
answer MCP without ``session_id`` (as the firmware author's MQTT gateway does) passes the suite, and the problem
shows in the console report and in ``--json``, with evidence that points at the transcript record; with
``--strict-protocol`` the same run fails with a one-line reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_hil_run import hil, matrix_dist, results

# the two tests that make the server ask the board for its tools (and the board answer); enough to provoke it
SUBSET = ["-k", "boot_banner or mcp_tool_list"]


def _evidence_record(first: str, base: Path) -> dict[str, object]:
    """The transcript record that ``first`` ("transcripts/<device>/<conn>.jsonl seq N") points at."""
    rel, _, seq = first.rpartition(" seq ")
    for line in (base / rel).read_text().splitlines():
        rec = json.loads(line)
        if rec["seq"] == int(seq):
            return dict(rec)
    raise AssertionError(f"no record seq {seq} in {base / rel}")


def test_problem_reported_in_console_and_json_and_strict_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XZ_STANDIN_PEER_DEVIATION", "bread-compact-wifi")
    dist = matrix_dist(tmp_path / "project", monkeypatch)
    common = ["run", "--virtual", "1", "--dist", str(dist), "--variant", "bread-compact-wifi"]

    proc = hil(*common, "--out", str(tmp_path / "out-json"), "--json", *SUBSET)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # recorded, never fatal
    (got,) = results(proc)
    assert got["status"] == "passed" and got["tests"]["tests"] == 2  # type: ignore[index]
    problems = got["problems"]
    assert isinstance(problems, list) and len(problems) == 1, problems
    (p,) = problems
    assert p["kind"] == "mcp-no-session-id" and "session_id" in p["reason"] and p["count"] >= 1
    # the evidence: the server's problem event, and on that connection the board's mcp reply without session_id
    rec = _evidence_record(p["first"], Path(str(got["out_dir"])))
    assert rec["type"] == "problem" and rec["reason"] == p["reason"]
    conn_file = Path(str(got["out_dir"])) / p["first"].rpartition(" seq ")[0]
    sent = [json.loads(line) for line in conn_file.read_text().splitlines()]
    mcp_rx = [r["json"] for r in sent if r["dir"] == "rx" and r["type"] == "mcp"]
    assert mcp_rx and all("session_id" not in m for m in mcp_rx)

    proc = hil(*common, "--out", str(tmp_path / "out-text"), *SUBSET)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("PASSED ")
    at = next(i for i, line in enumerate(lines) if line.startswith("protocol problems (1;"))
    assert "mcp-no-session-id x" in lines[at + 1] and "session_id" in lines[at + 1] and p["device"] in lines[at + 1]
    assert lines[at + 2].strip().startswith("first: ") and ".jsonl seq " in lines[at + 2]

    proc = hil(*common, "--out", str(tmp_path / "out-strict"), "--strict-protocol", *SUBSET)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("FAILED ")
    reason = proc.stdout.splitlines()[1].strip()
    assert reason.startswith("--strict-protocol: 1 protocol problem(s), first mcp-no-session-id: ")


def test_unknown_ota_body_field_reaches_the_summary() -> None:
    """A field the firmware's system info does not have (a newer or other client's) is a problem of the device,
    not only of the OTA request record."""
    import asyncio

    import aiohttp

    from hil.server import ReferenceServer
    from hil.server.probe import ProbeDevice

    dev = "aa:bb:cc:00:00:29"

    async def go() -> dict[str, object]:
        async with ReferenceServer() as srv, aiohttp.ClientSession() as http:
            probe = ProbeDevice(dev)
            info = json.loads(probe.system_info())
            info["battery_level"] = 80  # not among the keys Ota::GetSystemInfo writes
            async with http.post(srv.ota_url, data=json.dumps(info).encode(), headers=probe.ota_headers()) as resp:
                assert resp.status == 200
            return dict(srv.summary(dev))

    summary = asyncio.run(go())
    problems = summary["problems"]
    assert isinstance(problems, list) and len(problems) == 1 and "battery_level" in problems[0]
    (detail,) = summary["problem_details"]  # type: ignore[misc]
    assert detail["kind"] == "ota-body-unknown-field" and detail["count"] == 1
