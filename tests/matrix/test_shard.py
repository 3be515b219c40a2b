"""Sharding: every variant in exactly one shard, balanced by cost, independent of input order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.matrix.conftest import make_entry
from xzbuild.core.errors import UserError
from xzbuild.matrix.shard import TARGET_WEIGHTS, CostModel, apply_shard, parse_shard, partition

TARGETS = sorted(TARGET_WEIGHTS)
entry_lists = st.lists(
    st.tuples(st.text("abcdefgh-", min_size=1, max_size=8), st.sampled_from(TARGETS)),
    min_size=0, max_size=60, unique_by=lambda t: t[0],
).map(lambda items: [make_entry(f"b/{name}", name, target) for name, target in items])


@settings(max_examples=60, deadline=None)
@given(entries=entry_lists, count=st.integers(1, 9), seed=st.randoms(use_true_random=False))
def test_partition_is_exact_balanced_and_order_independent(entries, count, seed) -> None:  # type: ignore[no-untyped-def]
    model = CostModel()
    shards = partition(entries, count, model)
    names = [e.full_name for shard in shards for e in shard]
    assert sorted(names) == sorted(e.full_name for e in entries)  # each exactly once
    loads = [sum(model.cost(e) for e in shard) for shard in shards]
    if entries:
        # greedy LPT: no shard exceeds another by more than the largest single cost
        assert max(loads) - min(loads) <= max(model.cost(e) for e in entries) + 1e-9
    shuffled = list(entries)
    seed.shuffle(shuffled)
    again = partition(shuffled, count, model)
    assert [sorted(e.full_name for e in s) for s in again] == [sorted(e.full_name for e in s) for s in shards]


def test_apply_shard_keeps_input_order_and_covers_everything() -> None:
    entries = [make_entry(f"b/v{i:02d}", f"v{i:02d}", TARGETS[i % len(TARGETS)]) for i in range(40)]
    parts = [apply_shard(entries, f"{i}/4") for i in range(1, 5)]
    assert sorted(e.full_name for p in parts for e in p) == sorted(e.full_name for e in entries)
    for part in parts:
        positions = [entries.index(e) for e in part]
        assert positions == sorted(positions)
    assert apply_shard(entries, None) == entries


def test_p4_variants_cost_more_than_c3() -> None:
    model = CostModel()
    assert model.cost(make_entry("b/p4", "p4", "esp32p4")) > model.cost(make_entry("b/c3", "c3", "esp32c3"))


def test_history_file_drives_costs(tmp_path: Path) -> None:
    # The build pool's results.jsonl format: full_name, target, seconds, status.
    history = tmp_path / "results.jsonl"
    lines = [{"full_name": "slow", "target": "esp32s3", "seconds": 900, "status": "built"},
             {"full_name": "fast", "target": "esp32s3", "seconds": 100, "status": "built"},
             {"full_name": "hit", "target": "esp32s3", "seconds": 1, "status": "cached"}]
    history.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    model = CostModel.from_file(history)
    assert model.cost(make_entry("b/slow", "slow")) == 900
    assert model.cost(make_entry("b/hit", "hit")) == 500  # cached runs are ignored: median of its target
    entries = [make_entry("b/slow", "slow"), make_entry("b/fast", "fast"), make_entry("b/x", "x"),
               make_entry("b/y", "y")]
    shards = partition(entries, 2, model)
    # slow (900) + fast (100) against x + y (unknown: 500 each, the median of their target)
    assert [sorted(e.full_name for e in s) for s in shards] == [["fast", "slow"], ["x", "y"]]
    simple = tmp_path / "times.json"
    simple.write_text(json.dumps({"fast": 12.5}), encoding="utf-8")
    assert CostModel.from_file(simple).cost(make_entry("b/fast", "fast")) == 12.5
    assert CostModel.from_file(tmp_path / "missing.json").history == {}


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "x", "1-4", ""])
def test_bad_shard_specs_are_user_errors(text: str) -> None:
    with pytest.raises(UserError, match="--shard"):
        parse_shard(text)


def test_bad_history_line_has_location(tmp_path: Path) -> None:
    bad = tmp_path / "h.jsonl"
    bad.write_text('{"full_name": "a", "seconds": 1}\n{not json\n', encoding="utf-8")
    with pytest.raises(UserError) as info:
        CostModel.from_file(bad)
    assert str(info.value).startswith(f"{bad}:2:")


def test_list_shards_are_the_build_shards(repo_root: Path, board_set, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`matrix list --shard i/N` shows exactly the enabled variants `matrix build --shard i/N` builds."""
    from click.testing import CliRunner

    from xzbuild.cli.main import cli
    from xzbuild.matrix import list_variants

    monkeypatch.setenv("XZBUILD_NO_CACHE", "1")
    enabled = [e for e in list_variants(board_set, "6.0.2") if e.enabled]
    seen: list[str] = []
    for i in (1, 2, 3):
        result = CliRunner().invoke(cli, ["matrix", "list", "--json", "--shard", f"{i}/3",
                                          "--boards", str(repo_root / "boards")])
        assert result.exit_code == 0, result.output
        listed = [r["full_name"] for r in json.loads(result.output)]
        assert listed == [e.full_name for e in apply_shard(enabled, f"{i}/3")]
        seen += listed
    assert sorted(seen) == sorted(e.full_name for e in enabled)
