"""The generated config.h of every board is equivalent to upstream's under the real C preprocessor, for every
variant's Kconfig values (runs by default: about 6 s on 2 cores, the
~180 gcc pairs run in parallel).

Oracle: ``gcc -E -dM`` on upstream's ``main/boards/<dir>/config.h`` at 48142026 (``upstream_at_pin``) and
on the generated header placed next to the board's own sibling headers, compared by
``xzbuild.codegen.cpp_equiv`` (which shares no code with ``xzbuild.parts``).
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from xzbuild.codegen.cpp_equiv import compare_headers
from xzbuild.codegen.generated_files import config_h_text
from xzbuild.model import Board, load_boards


def _kconfig_envs(board: Board) -> list[dict[str, str]]:
    """One set of predefined CONFIG_ macros per variant, as ESP-IDF's sdkconfig.h spells them."""
    envs = []
    for v in board.variants:
        env = {k: ("1" if val == "y" else val) for k, val in v.effective_sdkconfig.items() if val != "n"}
        if v.kconfig:
            env[v.kconfig.config] = "1"
        env[f"CONFIG_IDF_TARGET_{v.target.upper()}"] = "1"
        envs.append(env)
    if not envs:  # boards without config.json builds: one per Kconfig entry
        envs = [{k.config: "1", f"CONFIG_IDF_TARGET_{k.target.upper()}": "1"} for k in board.kconfig or []]
    return envs or [{f"CONFIG_IDF_TARGET_{board.target.upper()}": "1"}]


def test_rendered_headers_match_upstream_under_gcc(repo_root: Path, upstream_at_pin: Path, gcc: str,
                                                   tmp_path: Path) -> None:
    """Oracle: gcc -E -dM on upstream's config.h, token for token, for every variant."""
    bs = load_boards(repo_root / "boards")
    jobs = []
    for board in bs.boards:
        work = tmp_path / board.dir.replace("/", "_")
        shutil.copytree(upstream_at_pin / "main" / "boards" / board.dir, work)
        (work / "generated.h").write_text(config_h_text(board), encoding="utf-8")
        jobs += [(board.dir, work, env, tmp_path / "w" / f"{board.dir.replace('/', '_')}.{i}")
                 for i, env in enumerate(_kconfig_envs(board))]

    def judge(job: tuple[str, Path, dict[str, str], Path]) -> str | None:
        name, work, env, scratch = job
        result = compare_headers(work / "config.h", work / "generated.h", env, scratch)
        return None if result.strict else f"{name}: {result.describe()}"  # token for token, not just value

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        failures = [f for f in pool.map(judge, jobs) if f]
    assert not failures, failures[:5]
    assert len(jobs) >= 177
    print(f"gcc -E -dM judged {len(jobs)} variant configurations of {len(bs.boards)} boards")
