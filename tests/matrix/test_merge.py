"""`matrix merge`: shard results become one release manifest; shards must be disjoint and complete."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from xzbuild.cli.main import cli, main


def record(name: str, status: str = "built", shard: str = "1/2") -> str:
    # the fields `matrix build` writes to results.jsonl (readers ignore unknown keys)
    return json.dumps({"full_name": name, "board": name, "name": name, "target": "esp32s3", "idf": "6.0.2",
                       "status": status, "seconds": 12.5, "shard": shard}, sort_keys=True) + "\n"


def matrix_file(tmp_path: Path, *jobs: str) -> Path:
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps({"include": [{"job": f"j{i}", "variants": v} for i, v in enumerate(jobs)]}))
    return path


def test_merge_writes_one_sorted_manifest(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(record("zeta") + record("alpha"))
    (tmp_path / "b.jsonl").write_text(record("mid", "cached", "2/2"))
    out = tmp_path / "release" / "manifest.json"
    m = matrix_file(tmp_path, "zeta alpha", "mid")
    args = ["matrix", "merge", "--matrix", str(m), str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "-o", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    manifest = json.loads(out.read_text())
    assert manifest["count"] == 3 and manifest["failed"] == []
    assert [v["full_name"] for v in manifest["variants"]] == ["alpha", "mid", "zeta"]
    first = out.read_bytes()
    CliRunner().invoke(cli, args)
    assert out.read_bytes() == first  # deterministic


def test_missing_duplicate_and_failed_variants_are_errors(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a.jsonl").write_text(record("alpha"))
    (tmp_path / "b.jsonl").write_text(record("alpha"))
    out = tmp_path / "m.json"
    assert main(["matrix", "merge", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "-o", str(out)]) == 1
    assert "alpha is reported twice" in capsys.readouterr().err
    m = matrix_file(tmp_path, "alpha beta")
    assert main(["matrix", "merge", "--matrix", str(m), str(tmp_path / "a.jsonl"), "-o", str(out)]) == 1
    assert "no build result for beta" in capsys.readouterr().err
    (tmp_path / "c.jsonl").write_text(record("beta", "failed"))
    assert main(["matrix", "merge", "--matrix", str(m), str(tmp_path / "a.jsonl"), str(tmp_path / "c.jsonl"),
                 "-o", str(out)]) == 1
    assert "1 variant(s) failed to build: beta" in capsys.readouterr().err
    assert json.loads(out.read_text())["failed"] == ["beta"]  # the manifest still says what failed
    (tmp_path / "bad.jsonl").write_text(record("x") + "{oops\n")
    assert main(["matrix", "merge", str(tmp_path / "bad.jsonl"), "-o", str(out)]) == 1
    assert f"{tmp_path / 'bad.jsonl'}:2:" in capsys.readouterr().err
