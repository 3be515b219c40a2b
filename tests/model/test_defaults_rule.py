"""ESP-IDF's defaults rule in the model and the resolved configuration (issue 37 item 4).

ESP-IDF loads each file F of SDKCONFIG_DEFAULTS and right after it ``F.<target>`` if it exists; without
SDKCONFIG_DEFAULTS the list is the root ``sdkconfig.defaults`` if it exists, else empty — so a tree without a
root file loads no ``sdkconfig.defaults.<target>`` either. The oracle is esp-idf-kconfig's kconfgen (as the
stand-in runs it, with ESP-IDF's flash-size and partition-table choices) over the file list that rule gives,
written out here by hand; the model (board flash size and table) and xzbuild's resolver must agree with it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.importer.conftest import export_tree
from xzbuild.importer import import_firmware
from xzbuild.model import load_boards
from xzbuild.sdkconfig.resolve import Resolver

STANDIN = Path(__file__).resolve().parents[1] / "standin"
CASES = [("bread-compact-wifi", "esp32s3"), ("bread-compact-esp32", "esp32"), ("xmini-c3", "esp32c3")]


def _kconfgen(tree: Path, work: Path, target: str, files: list[Path]) -> dict[str, str]:
    sys.path.insert(0, str(STANDIN))
    try:
        from kconfig import resolve_sdkconfig  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(STANDIN))
    sdkconfig = work / "sdkconfig"
    resolve_sdkconfig(tree, work, target, files, sdkconfig)
    values = {}
    for line in sdkconfig.read_text(encoding="utf-8").splitlines():
        if line.startswith("CONFIG_") and "=" in line:
            key, value = line.split("=", 1)
            values[key] = value
    return values


def _flash(values: dict[str, str]) -> str:
    return next(k.removeprefix("CONFIG_ESPTOOLPY_FLASHSIZE_") for k, v in values.items()
                if k.startswith("CONFIG_ESPTOOLPY_FLASHSIZE_") and k[27:].endswith("MB") and v == "y")


def _table(values: dict[str, str]) -> str:
    if values.get("CONFIG_PARTITION_TABLE_CUSTOM") == "y":
        return values["CONFIG_PARTITION_TABLE_CUSTOM_FILENAME"].strip('"')
    assert values.get("CONFIG_PARTITION_TABLE_SINGLE_APP") == "y"
    return "esp-idf/partitions_singleapp.csv"  # ESP-IDF's components/partition_table/partitions_singleapp.csv


@pytest.fixture(scope="module")
def pin_tree(upstream_history: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_tree(upstream_history, "HEAD", tmp_path_factory.mktemp("pin") / "tree")


@pytest.mark.parametrize("root_file", [True, False], ids=["with-root-defaults", "no-root-defaults"])
def test_model_and_resolver_follow_esp_idf(pin_tree: Path, tmp_path: Path, root_file: bool) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(pin_tree, tree, symlinks=True)
    if not root_file:
        (tree / "sdkconfig.defaults").unlink()
        assert (tree / "sdkconfig.defaults.esp32s3").is_file()  # still there, and ESP-IDF ignores it
    report = import_firmware(tree, tmp_path / "boards")
    assert report.errors == []
    bs = load_boards(tmp_path / "boards", validate=False)
    variants = {v.name: v for v in bs.variants()}
    with Resolver(tree) as resolver:
        for name, target in CASES:
            v = variants[name]
            assert v.target == target and not any("FLASHSIZE" in line or "PARTITION" in line
                                                  for line in v.sdkconfig_append)
            # The rule, by hand: [sdkconfig.defaults, sdkconfig.defaults.<target>] or nothing at all.
            files = [tree / "sdkconfig.defaults", tree / f"sdkconfig.defaults.{target}"] if root_file else []
            want = _kconfgen(tree, tmp_path / f"kconf-{name}", target, [f for f in files if f.is_file()])
            assert v.flash_size == _flash(want), name
            assert v.partition_table == _table(want), name
            resolved = resolver.resolve_lines(target, [])
            flash_keys = {k for k, val in resolved.values.items() if k.startswith("ESPTOOLPY_FLASHSIZE_") and val == "y"}
            # (ESP-IDF's flash choice is not in the firmware Kconfig: the resolver keeps each file's raw line)
            assert (f"ESPTOOLPY_FLASHSIZE_{_flash(want)}" in flash_keys) if root_file else not flash_keys, name
            assert (resolved.get("SPIRAM") == "y") == (want.get("CONFIG_SPIRAM") == "y"), name
