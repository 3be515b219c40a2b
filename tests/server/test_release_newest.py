"""Which release a served release directory offers as newest, against upstream's own comparison (issue 44).

The reference is the firmware's code: ``Ota::ParseVersion`` and ``Ota::IsNewVersionAvailable`` are cut out of
upstream's ``main/ota.cc`` and compiled with g++ here. They compare dot-separated numbers as numbers (semver.org
§11: "numeric identifiers are compared numerically"), so ``2.4.10`` is newer than ``2.4.9`` and ``2.10.0`` newer
than ``2.9.9``, and on an equal prefix the longer version is newer. The server must offer the release the device
would itself take as newer than every other one.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hil.server.ota_releases import load_index

# Versions that differ in digit count per segment (and in segment count).
CASES = [
    ["2.4.9", "2.4.10"],
    ["2.9.9", "2.10.0"],
    ["9.0.0", "10.0.0"],
    ["2.4.2", "2.4.19", "2.4.100"],
    ["1.99", "1.100"],
    ["2.4", "2.4.1"],
    ["0.9.99", "0.10.1", "0.10.0"],
]


def _function(source: str, name: str) -> str:
    """The text of ``<type> Ota::<name>(...) { ... }`` in ``source`` (braces balanced)."""
    m = re.search(rf"^[^\n]*\bOta::{name}\(", source, re.M)
    assert m is not None, f"upstream main/ota.cc has no Ota::{name}"
    start = m.start()
    depth, i = 0, source.index("{", m.end())
    while True:
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        i += 1
        if depth == 0:
            return source[start:i].replace("Ota::", "")


@pytest.fixture(scope="module")
def upstream_newer(upstream: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A program: ``newer A B`` exits 0 when upstream's firmware takes B as a new version over A."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.fail("g++ is not installed (apt-get install g++): upstream's version comparison is compiled with it")
    source = (upstream / "main" / "ota.cc").read_text(encoding="utf-8")
    program = "\n".join([
        "#include <algorithm>", "#include <sstream>", "#include <string>", "#include <vector>",
        "std::vector<int> ParseVersion(const std::string& version);",
        _function(source, "ParseVersion"), _function(source, "IsNewVersionAvailable"),
        "int main(int argc, char** argv) { return argc == 3 && IsNewVersionAvailable(argv[1], argv[2]) ? 0 : 1; }",
    ])
    work = tmp_path_factory.mktemp("newer")
    (work / "newer.cc").write_text(program)
    subprocess.run([gxx, "-std=c++17", "-O0", "-o", str(work / "newer"), str(work / "newer.cc")], check=True)
    return work / "newer"


def _device_newer(program: Path, current: str, candidate: str) -> bool:
    return subprocess.run([str(program), current, candidate], check=False).returncode == 0


def _release_dir(root: Path, versions: list[str]) -> Path:
    """One release per version of the same board, each in its own dist (as successive releases are served)."""
    for i, version in enumerate(versions):
        var = root / f"dist{i}" / "board-a"
        var.mkdir(parents=True)
        app = b"\xe9" + version.encode() + bytes(64)
        (var / "xiaozhi.bin").write_bytes(app)
        (var / "release.json").write_text(json.dumps({
            "name": "board-a", "full_name": "board-a", "target": "esp32s3", "app_version": version,
            "chip_revision": {"min": "v0.0", "max": "v0.99"},
            "files": [{"role": "app", "path": "board-a/xiaozhi.bin", "sha256": hashlib.sha256(app).hexdigest()}]}))
    return root


INFO = {"chip_model_name": "esp32s3", "chip_info": {"revision": 0}, "ota": {"label": "ota_0"},
        "partition_table": [{"label": "ota_0", "type": 0, "subtype": 0x10, "size": 0x300000},
                            {"label": "ota_1", "type": 0, "subtype": 0x11, "size": 0x300000}]}


@pytest.mark.parametrize("versions", CASES, ids=["<".join(c) for c in CASES])
def test_server_offers_what_the_firmware_takes_as_newest(upstream_newer: Path, tmp_path: Path,
                                                         versions: list[str]) -> None:
    newest = [v for v in versions if not any(_device_newer(upstream_newer, v, w) for w in versions if w != v)]
    assert len(newest) == 1, versions  # the cases are totally ordered by upstream's rule
    for order in itertools.permutations(versions):
        root = tmp_path / "-".join(order)
        index = load_index(_release_dir(root, list(order)))
        img, why = index.choose("dev", "board-a/2.0.0", INFO)
        assert img is not None and img.version == newest[0], (order, why)
