"""Independent check with the real preprocessor: gcc -E -dM on the upstream header and on the rendered one
(placed next to the board's own sibling headers), for every variant's Kconfig values. Slow: ~15 s."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from xzbuild.model import load_boards
from xzbuild.parts import emit_config_h, render_items

UPSTREAM = Path("/work/upstream/main/boards")


@pytest.mark.slow
@pytest.mark.skipif(not UPSTREAM.is_dir() or shutil.which("gcc") is None, reason="needs upstream and gcc")
def test_rendered_headers_match_upstream_under_gcc(repo_root: Path, tmp_path: Path) -> None:
    from xzbuild.codegen.cpp_equiv import compare_headers

    bs = load_boards(repo_root / "boards")
    failures = []
    for board in bs.boards:
        work = tmp_path / board.dir.replace("/", "_")
        shutil.copytree(UPSTREAM / board.dir, work)
        (work / "generated.h").write_text("\n".join(render_items(emit_config_h(board))) + "\n")
        envs = []
        for v in board.variants:
            env = {k: ("1" if val == "y" else val) for k, val in v.effective_sdkconfig.items() if val != "n"}
            if v.kconfig:
                env[v.kconfig.config] = "1"
            env[f"CONFIG_IDF_TARGET_{v.target.upper()}"] = "1"
            envs.append(env)
        for env in envs or [{}]:
            result = compare_headers(work / "config.h", work / "generated.h", env, tmp_path)
            if not result.strict:  # token for token, not just the same value
                failures.append(f"{board.dir}: {result.describe()}")
    assert not failures, failures[:5]
