#!/usr/bin/env python3
"""Round trip on a real firmware tree: import it, regenerate into a copy, and compare with the original.

    .venv/bin/python bench/roundtrip.py /path/to/xiaozhi-esp32 [--json] [--keep DIR]

With ``--boards DIR`` the committed board files are used instead of a fresh import.

Reports: config.json byte-identical (and how many needed no whitespace carried over from the checkout),
Kconfig BOARD_TYPE entries / target defaults / CMake board table / board dependency lists equal entry for
entry, config.h preprocessor equivalence per variant (``gcc -E -dM``, the variant's CONFIG_ symbols from
the firmware Kconfig, stub IDF headers; counted by value and token for token, and the exit status needs
token-identical headers), and the exit codes of ``generate`` then ``generate --check``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.codegen import readback  # noqa: E402
from xzbuild.codegen.cpp_equiv import compare_headers  # noqa: E402
from xzbuild.codegen.generated_files import config_json_value  # noqa: E402
from xzbuild.codegen.global_tables import DEPENDENCY_LISTS  # noqa: E402
from xzbuild.codegen.hooks import hook_key, read_hooks  # noqa: E402
from xzbuild.codegen.jsonfmt import format_config_json  # noqa: E402
from xzbuild.codegen.kconfig_check import variant_fragment  # noqa: E402
from xzbuild.sdkconfig.evaluate import KconfigEvaluator  # noqa: E402


def _xzbuild(*args: str) -> int:
    cmd = [sys.executable, "-m", "xzbuild.cli.main", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False).returncode


def tables_report(upstream: Path, copy: Path) -> dict[str, object]:
    """Entry-for-entry comparison of the Kconfig choice, target defaults, CMake chain and dependency lists."""
    k_up = (upstream / "main/Kconfig.projbuild").read_text(encoding="utf-8")
    k_new = (copy / "main/Kconfig.projbuild").read_text(encoding="utf-8")
    c_up = (upstream / "main/CMakeLists.txt").read_text(encoding="utf-8")
    c_new = (copy / "main/CMakeLists.txt").read_text(encoding="utf-8")
    e_up = {s: (lab, t) for s, lab, t in readback.kconfig_entries(k_up)}
    e_new = {s: (lab, t) for s, lab, t in readback.kconfig_entries(k_new)}
    t_up, t_new = readback.cmake_table(c_up), readback.cmake_table(c_new)
    lists = {
        name: readback.dependency_terms(k_up, kind, name) == readback.dependency_terms(k_new, kind, name)
        for kind, name in DEPENDENCY_LISTS
    }
    labels_new = [lab for _, lab, _ in readback.kconfig_entries(k_new)]
    hooks_up = sorted(hook_key(h) for h in read_hooks(c_up))
    hooks_new = sorted(hook_key(h) for h in read_hooks(c_new))
    from xzbuild.codegen.natural import natural_label_key

    return {
        "kconfig_symbols_upstream": len(e_up),
        "kconfig_symbols_generated": len(e_new),
        "kconfig_entries_equal": sum(1 for s, v in e_up.items() if e_new.get(s) == v),
        "kconfig_natural_order": labels_new == sorted(labels_new, key=natural_label_key),
        "kconfig_target_defaults_equal": readback.kconfig_defaults(k_up) == readback.kconfig_defaults(k_new),
        "cmake_branches_upstream": len(t_up),
        "cmake_branches_generated": len(t_new),
        "cmake_branches_equal": sum(1 for s, v in t_up.items() if t_new.get(s) == v),
        "cmake_symbols_equal_kconfig": set(t_new) == set(e_new),
        "dependency_lists_equal": lists,
        "cmake_component_hooks_upstream": len(hooks_up),
        "cmake_component_hooks_equal": hooks_up == hooks_new,
    }


def config_json_report(upstream: Path, copy: Path, board_set: object) -> dict[str, object]:
    """Byte identity of every upstream config.json after regeneration."""
    ups = sorted((upstream / "main/boards").rglob("config.json"))
    same = [p for p in ups if (copy / p.relative_to(upstream)).read_bytes() == p.read_bytes()]
    model_only = 0
    for board in board_set.boards:  # type: ignore[attr-defined]
        path = upstream / "main/boards" / board.dir / "config.json"
        if board.has_config_json and path.is_file():
            layout = getattr(board, "config_json_layout", None)
            text = format_config_json(config_json_value(board)) if layout is None else None
            if text is not None and text.encode("utf-8") == path.read_bytes():
                model_only += 1
            elif layout is not None:
                model_only += 1 if (copy / path.relative_to(upstream)).read_bytes() == path.read_bytes() else 0
    return {
        "config_json_upstream": len(ups),
        "config_json_identical": len(same),
        "config_json_identical_from_model_alone": model_only,
        "config_json_differs": [str(p.relative_to(upstream)) for p in ups if p not in same],
    }


def config_h_report(upstream: Path, copy: Path, board_set: object, work: Path) -> dict[str, object]:
    """Per-variant preprocessor equivalence of generated vs upstream config.h."""
    kconfig = (upstream / "main/Kconfig.projbuild").read_text(encoding="utf-8")
    ok = checked = strict = 0
    failures: list[str] = []
    respelled: list[str] = []
    extra_ok = extra_strict = extra = 0
    with KconfigEvaluator(kconfig, upstream) as evaluator:
        for variant in board_set.variants():  # type: ignore[attr-defined]
            rel = Path("main/boards") / variant.board.dir / "config.h"
            defines = evaluator.evaluate(variant.target, variant_fragment(variant)).c_defines()
            result = compare_headers(upstream / rel, copy / rel, defines, work)
            checked += 1
            ok += result.ok
            strict += result.strict
            if not result.ok:
                failures.append(f"{variant.board.dir} [{variant.name}]: {result.describe()}")
            elif not result.strict:
                respelled.append(f"{variant.board.dir} [{variant.name}]: {result.describe()}")
        # Boards no variant builds (no config.json, empty builds, unselected symbols): each symbol once.
        built = {(v.board.dir, v.kconfig.symbol) for v in board_set.variants() if v.kconfig}  # type: ignore[attr-defined]
        for board in board_set.boards:  # type: ignore[attr-defined]
            rel = Path("main/boards") / board.dir / "config.h"
            symbols = [k.symbol for k in board.kconfig if (board.dir, k.symbol) not in built]
            if not board.kconfig and not board.variants:
                symbols = [""]
            for symbol in symbols:
                fragment = [f"CONFIG_{symbol}=y"] if symbol else []
                defines = evaluator.evaluate(board.target, fragment).c_defines()
                result = compare_headers(upstream / rel, copy / rel, defines, work)
                extra += 1
                extra_ok += result.ok
                extra_strict += result.strict
                if not result.ok:
                    failures.append(f"{board.dir} [{symbol or 'no symbol'}]: {result.describe()}")
                elif not result.strict:
                    respelled.append(f"{board.dir} [{symbol or 'no symbol'}]: {result.describe()}")
    return {
        "config_h_variants_checked": checked,
        "config_h_variants_equivalent": ok,
        "config_h_variants_token_identical": strict,
        "config_h_respelled": respelled,
        "config_h_unbuilt_symbols_checked": extra,
        "config_h_unbuilt_symbols_equivalent": extra_ok,
        "config_h_unbuilt_symbols_token_identical": extra_strict,
        "config_h_failures": failures,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the round trip and print the figures (``--json`` for machine output)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("firmware", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", type=Path, help="keep the imported boards and the regenerated tree here")
    parser.add_argument("--boards", type=Path, help="use these board files instead of importing the tree")
    args = parser.parse_args(argv)
    from xzbuild.importer.run import import_firmware
    from xzbuild.model import load_boards

    upstream = args.firmware.resolve()
    tmp = Path(tempfile.mkdtemp(prefix="xzbuild-roundtrip-")) if args.keep is None else args.keep.resolve()
    tmp.mkdir(parents=True, exist_ok=True)
    boards, copy = tmp / "boards", tmp / "firmware"
    shutil.rmtree(boards, ignore_errors=True)
    shutil.rmtree(copy, ignore_errors=True)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    if args.boards is not None:
        shutil.copytree(args.boards, boards)
    else:
        import_firmware(upstream, boards)
    timings["import_s" if args.boards is None else "copy_boards_s"] = time.perf_counter() - t
    shutil.copytree(upstream, copy, ignore=shutil.ignore_patterns(".git"), symlinks=True)
    t = time.perf_counter()
    rc_generate = _xzbuild("generate", "--firmware", str(copy), "--boards", str(boards))
    timings["generate_s"] = time.perf_counter() - t
    t = time.perf_counter()
    rc_check = _xzbuild("generate", "--firmware", str(copy), "--boards", str(boards), "--check")
    timings["generate_check_s"] = time.perf_counter() - t
    board_set = load_boards(boards)
    report: dict[str, object] = {"firmware": str(upstream), "generate_rc": rc_generate, "generate_check_rc": rc_check}
    report.update(config_json_report(upstream, copy, board_set))
    report.update(tables_report(upstream, copy))
    t = time.perf_counter()
    report.update(config_h_report(upstream, copy, board_set, tmp / "cpp"))
    timings["config_h_s"] = time.perf_counter() - t
    report["timings"] = {k: round(v, 2) for k, v in timings.items()}
    if args.keep is None:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for key, value in report.items():
            if isinstance(value, list):
                print(f"{key}: {len(value)}")
                for item in value[:20]:
                    print(f"    {item}")
            else:
                print(f"{key}: {value}")
    good = (
        rc_generate == 0 and rc_check == 0
        and report["config_json_identical"] == report["config_json_upstream"]
        and report["kconfig_entries_equal"] == report["kconfig_symbols_upstream"] == report["kconfig_symbols_generated"]
        and report["cmake_branches_equal"] == report["cmake_branches_upstream"] == report["cmake_branches_generated"]
        # The bar is the same expansion under gcc -E -dM: token for token, not just the same value.
        and report["config_h_variants_token_identical"] == report["config_h_variants_checked"]
        and report["config_h_unbuilt_symbols_token_identical"] == report["config_h_unbuilt_symbols_checked"]
    )
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
