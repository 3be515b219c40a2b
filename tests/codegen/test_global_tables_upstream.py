"""The generated global tables equal upstream's: the Kconfig board choice (entries in order, per-target
defaults), the board dependency lists, the display choices' defaults and the CMake BOARD_TYPE chain.

Oracle: upstream's own ``main/Kconfig.projbuild`` and ``main/CMakeLists.txt`` at 48142026, read by
``tests/codegen/readback.py`` (a reader written for the tests, importing nothing from ``xzbuild``). The history
commits with today's layout are judged the same way in ``tests/importer/test_history.py``."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.codegen import readback
from xzbuild.cli.main import main

LISTS = [("config", "USE_EMOTE_MESSAGE_STYLE"), ("config", "USE_DEVICE_AEC"), ("choice", "DISPLAY_OLED_TYPE"),
         ("choice", "DISPLAY_LCD_TYPE")]


def table_differences(upstream: Path, generated: Path) -> list[str]:
    """Every way the generated tables differ from upstream's (empty when equal)."""
    k_up = (upstream / "main/Kconfig.projbuild").read_text(encoding="utf-8")
    k_new = (generated / "main/Kconfig.projbuild").read_text(encoding="utf-8")
    c_up = (upstream / "main/CMakeLists.txt").read_text(encoding="utf-8")
    c_new = (generated / "main/CMakeLists.txt").read_text(encoding="utf-8")
    out = []
    e_up, e_new = readback.kconfig_entries(k_up), readback.kconfig_entries(k_new)
    if e_up != e_new:
        out.append(f"Kconfig entries: only upstream {sorted(set(e_up) - set(e_new))[:5]}, "
                   f"only ours {sorted(set(e_new) - set(e_up))[:5]}, order equal: {sorted(e_up) == sorted(e_new)}")
    d_up, d_new = readback.kconfig_defaults(k_up), readback.kconfig_defaults(k_new)
    if d_up != d_new:
        out.append(f"target defaults: upstream {d_up} ours {d_new}")
    for kind, name in LISTS:
        t_up, t_new = readback.dependency_terms(k_up, kind, name), readback.dependency_terms(k_new, kind, name)
        if not t_up or t_up != t_new:
            out.append(f"{name} list: only upstream {sorted(t_up - t_new)}, only ours {sorted(t_new - t_up)}")
    for _, name in LISTS[2:]:
        if readback.choice_default(k_up, name) != readback.choice_default(k_new, name):
            out.append(f"{name} default: upstream {readback.choice_default(k_up, name)}, "
                       f"ours {readback.choice_default(k_new, name)}")
    b_up, b_new = readback.cmake_table(c_up), readback.cmake_table(c_new)
    if b_up != b_new or list(b_up) != list(b_new):
        diff = sorted(s for s in set(b_up) | set(b_new) if b_up.get(s) != b_new.get(s))
        out.append(f"CMake chain: {len(diff)} branches differ, e.g. "
                   + "; ".join(f"{s}: {b_up.get(s)} != {b_new.get(s)}" for s in diff[:3]))
    if len(e_up) < 50 or len(b_up) < 50:
        out.append(f"upstream tables not read ({len(e_up)} entries, {len(b_up)} branches)")
    return out


def test_generated_tables_equal_upstream_at_pin(upstream_at_pin: Path, repo_root: Path, tmp_path: Path) -> None:
    copy = tmp_path / "fw"
    shutil.copytree(upstream_at_pin, copy, ignore=shutil.ignore_patterns(".git"), symlinks=True)
    # generate replaces the board regions of both files from boards/ (it keeps nothing of the old region)
    assert main(["generate", "--boards", str(repo_root / "boards"), "--firmware", str(copy)]) == 0
    assert table_differences(upstream_at_pin, copy) == []
