"""For every imported board, the emitted config.h defines the same macros with the same replacement text
(token for token, as ``gcc -E -dM`` prints it) as the upstream header the importer read, for every
variant's Kconfig configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from xzbuild.importer.configh import parse_config_h
from xzbuild.model import Board, BoardSet, load_boards
from xzbuild.parts import emit_config_h
from xzbuild.parts.items import Conditional, Define, Item
from xzbuild.parts.preprocess import defined_macros

UPSTREAM = Path("/work/upstream/main/boards")

pytestmark = pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream checkout not available")


@pytest.fixture(scope="module")
def board_set(repo_root: Path) -> BoardSet:
    return load_boards(repo_root / "boards")


def _envs(board: Board, bs: BoardSet) -> list[dict[str, str]]:
    """One Kconfig environment per variant (or per Kconfig entry for boards without variants)."""
    envs = []
    for v in board.variants:
        env = dict(v.effective_sdkconfig)
        if v.kconfig:
            env[v.kconfig.config] = "y"
        env[f"CONFIG_IDF_TARGET_{v.target.upper()}"] = "y"
        envs.append(env)
    if not envs:
        for k in board.kconfig or []:
            env = {f"CONFIG_{key}": val for key, val in bs.firmware.defaults_for(k.target).items()}
            env[k.config] = "y"
            env[f"CONFIG_IDF_TARGET_{k.target.upper()}"] = "y"
            envs.append(env)
    return envs or [{f"CONFIG_IDF_TARGET_{board.target.upper()}": "y"}]


def _paths(items: list[Item], prefix: tuple[str, ...] = ()) -> set[tuple[tuple[str, ...], str, str]]:
    """Every define with the chain of branch conditions above it (checks dead branches too)."""
    from xzbuild.parts.values import tokens

    out = set()
    for item in items:
        if isinstance(item, Define):
            out.add((prefix, item.name, tokens(item.value)))
        elif isinstance(item, Conditional):
            for i, (cond, body) in enumerate(item.branches):
                out |= _paths(body, (*prefix, f"{i}:{cond}"))
    return out


def test_every_board_emits_what_upstream_defines(board_set: BoardSet) -> None:
    checked = 0
    for board in board_set.boards:
        header = UPSTREAM / board.dir / "config.h"
        parsed = parse_config_h(header.read_text(encoding="utf-8", errors="replace"), str(header))
        upstream: list[Item] = parsed.items
        if parsed.guard:
            upstream = [Conditional([(f"ifndef {parsed.guard}", [Define(parsed.guard), *parsed.items])])]
        emitted = emit_config_h(board)
        assert _paths(emitted) == _paths(upstream), board.dir
        for env in _envs(board, board_set):
            got, want = defined_macros(emitted, env, strict=True), defined_macros(upstream, env, strict=True)
            assert got == want, (board.dir, env.get("CONFIG_IDF_TARGET"))
            checked += 1
    assert checked >= 177
