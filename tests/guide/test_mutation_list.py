"""The mutation list (tests/mutations/*.yaml, run by bench/mutations.py) stays applicable as the code moves:
every mutation's text occurs exactly once in its file and every catching test it names exists. The full run
(each mutation caught) is bench/mutations.py; this only keeps the list from rotting between runs."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _runner():
    spec = importlib.util.spec_from_file_location("bench_mutations", REPO / "bench" / "mutations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_mutations", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_mutation_applies_once() -> None:
    mutations = _runner().load()  # raises SystemExit with the file's name on a stale find/file
    assert len(mutations) >= 25
    ids = {m.id for m in mutations}
    assert {"pr-link-symbols", "otadata-crc", "kconfig-default-c3-table"} <= ids  # named by issue 27
    # issue 44: its five areas and each reach of the build cache key
    assert {"ota-server-newest-numeric", "kconfig-label-escape-quote-and-backslash",
            "select-manifest-dependency-nothing-includes", "cache-key-nested-board", "nvsgen-entry-boundary",
            "cache-key-sibling-board-header", "cache-key-common-header", "cache-key-component-manifest"} <= ids


def test_every_catching_test_is_collected() -> None:
    nodes = sorted({t for m in _runner().load() for t in m.tests})
    files = sorted({n.split("::")[0] for n in nodes})
    missing = [f for f in files if not (REPO / f).is_file()]
    assert not missing, f"mutation lists name test files that do not exist: {missing}"
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-m", "", *nodes], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
