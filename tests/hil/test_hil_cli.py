"""`xzbuild hil boards|scan|lock|unlock` and the one-line errors for bad inventories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hil.vboard.board import VirtualBoard
from hil.vboard.rfc2217 import RFC2217Server
from xzbuild.cli.main import main

LAB = """\
boards:
  - id: bench-s3
    port: /dev/null
    chip: esp32s3
    flash: 16MB
    variant: bread-compact-wifi
  - id: virtual-c3
    virtual: {chip: esp32c3}
"""


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    path = tmp_path / "lab.yaml"
    path.write_text(LAB)
    return path


def test_boards_lists_presence_and_leases(lab: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hil", "boards", "--lab", str(lab), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["id"], r["presence"], r["lease"]) for r in rows] == [("bench-s3", "present", None),
                                                                    ("virtual-c3", "virtual", None)]
    assert main(["hil", "lock", "bench-s3", "--lab", str(lab), "--for", "10m", "--holder", "alice"]) == 0
    assert "locked bench-s3 leased by alice" in capsys.readouterr().out
    assert main(["hil", "lock", "bench-s3", "--lab", str(lab)]) == 1
    assert "bench-s3 leased by alice" in capsys.readouterr().err
    main(["hil", "boards", "--lab", str(lab), "--json"])
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert first["lease"].startswith("bench-s3 leased by alice")
    assert main(["hil", "unlock", "bench-s3", "--lab", str(lab)]) == 1  # not ours
    assert "pass --force" in capsys.readouterr().err
    assert main(["hil", "unlock", "bench-s3", "--lab", str(lab), "--force"]) == 0
    assert main(["hil", "lock", "nope", "--lab", str(lab)]) == 1
    assert "no board 'nope' in the lab inventory (known: bench-s3, virtual-c3)" in capsys.readouterr().err


def test_bad_inventory_is_one_line_per_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(LAB.replace("chip: esp32s3", "chip: esp33").replace("flash: 16MB", "flash: lots"))
    assert main(["hil", "boards", "--lab", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith(f"{path}:") for line in err), err
    assert "Traceback" not in "".join(err)


def test_scan_proposes_an_inventory_entry(s3_board: tuple[VirtualBoard, RFC2217Server],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _, server = s3_board
    assert main(["hil", "scan", "--port", server.url]) == 0
    text = capsys.readouterr().out
    assert "# ESP32-S3 (QFN56) (revision v0.0), flash id 0x1840ef" in text
    proposed = yaml.safe_load(text)["boards"][0]
    assert proposed["chip"] == "esp32s3" and proposed["mac"] == "24:ec:4a:01:02:03"
    assert proposed["flash"] == "16MB" and proposed["psram"] == "8MB" and proposed["port"] == server.url


def test_boards_probe_checks_identity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text("boards:\n  - id: v1\n    virtual: {chip: esp32c6}\n    mac: '24:ec:4a:00:00:01'\n"
                    "  - id: v2\n    virtual: {chip: esp32s3}\n    chip: esp32c3\n")
    assert main(["hil", "boards", "--lab", str(path), "--probe", "--json"]) == 0
    rows = {r["id"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["v1"]["identity"] == "ok (esp32c6, 24:ec:4a:00:00:01, 16MB flash)"
    assert rows["v2"]["identity"].startswith("MISMATCH: inventory says esp32c3 but the chip on the port is esp32s3")
