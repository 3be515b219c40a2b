"""Property test: any mutation of valid board files either loads or fails with clean file:line:col errors."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.model.factory import make_board_tree
from xzbuild.core.errors import UserError
from xzbuild.model import load_boards

REPO = Path(__file__).resolve().parents[2]
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
FILES = ["demo-wifi.yaml", "acme/p4-board.yaml", "_firmware.yaml"]
LINE = re.compile(r"^\S+\.yaml:\d+:\d+: \S.*$")  # one printable line, located, with a message

scalars = st.one_of(st.none(), st.booleans(), st.integers(-70000, 70000), st.floats(allow_nan=False),
                    st.text(max_size=12), st.sampled_from(["y", "n", "NC", "GPIO_NUM_4", "esp32s3", "0x18", "hardware",
                                                           "else", "ifdef X", "BOARD_TYPE_DEMO_WIFI"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=6)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _mutate_data(text: str, data: st.DataObject) -> str:
    doc = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (libyaml when available)
    paths = [p for p in _paths(doc) if p]
    path = data.draw(st.sampled_from(paths))
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    action = data.draw(st.sampled_from(["replace", "delete", "add"]))
    if action == "replace":
        parent[path[-1]] = data.draw(values)
    elif action == "delete":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=10))] = data.draw(values)
    else:
        parent.insert(path[-1], data.draw(values))
    return yaml.dump(doc, Dumper=_DUMPER, allow_unicode=True, sort_keys=False)


def _mutate_text(text: str, data: st.DataObject) -> str:
    pos = data.draw(st.integers(0, len(text)))
    action = data.draw(st.sampled_from(["insert", "delete", "truncate", "line"]))
    if action == "insert":
        return text[:pos] + data.draw(st.text(st.sampled_from(list(":-[]{}!&*#|>'\"\t %@`,?\n\\ab0")), min_size=1,
                                              max_size=4)) + text[pos:]
    if action == "delete":
        return text[:pos] + text[pos + data.draw(st.integers(1, 20)):]
    if action == "truncate":
        return text[:pos]
    lines = text.split("\n")
    lines[data.draw(st.integers(0, len(lines) - 1))] = data.draw(st.text(max_size=20))
    return "\n".join(lines)


_TREE: dict[str, Any] = {}


def _tree() -> tuple[Path, dict[str, str]]:
    # Hypothesis re-runs the body many times; build the pristine tree once per process.
    if not _TREE:
        root = Path(tempfile.mkdtemp(prefix="xzbuild-prop-"))
        boards = make_board_tree(root, REPO)
        _TREE["boards"] = boards
        _TREE["texts"] = {f: (boards / f).read_text(encoding="utf-8") for f in FILES}
    return _TREE["boards"], _TREE["texts"]


def check_mutation(data: st.DataObject) -> None:
    boards, texts = _tree()
    name = data.draw(st.sampled_from(FILES))
    mutated = (_mutate_data if data.draw(st.booleans()) else _mutate_text)(texts[name], data)
    target = boards / name
    try:
        target.write_text(mutated, encoding="utf-8")
        try:
            load_boards(boards)
        except UserError as exc:  # UserErrors is a UserError
            lines = str(exc).splitlines()
            assert lines
            for line in lines:
                assert LINE.match(line), line
    finally:
        target.write_text(texts[name], encoding="utf-8")


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutations_fail_cleanly(data: st.DataObject) -> None:
    check_mutation(data)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutations_fail_cleanly_long(data: st.DataObject) -> None:
    check_mutation(data)


def teardown_module() -> None:
    if _TREE:
        shutil.rmtree(_TREE["boards"].parent, ignore_errors=True)
        _TREE.clear()
    if _REAL_TREE:
        shutil.rmtree(_REAL_TREE["root"], ignore_errors=True)
        _REAL_TREE.clear()


REAL = ["wk-esp32s3-dev.yaml", "waveshare/esp32-p4-wifi6-touch-lcd.yaml", "sensecap-watcher.yaml"]
_REAL_TREE: dict[str, Any] = {}


def check_real_mutation(data: st.DataObject) -> None:
    """Same property on real imported boards (deep config_h trees), one board per tree."""
    if not _REAL_TREE:
        root = Path(tempfile.mkdtemp(prefix="xzbuild-prop-real-"))
        (root / "waveshare").mkdir()
        shutil.copy(REPO / "boards" / "_firmware.yaml", root / "_firmware.yaml")
        _REAL_TREE["root"] = root
        _REAL_TREE["texts"] = {f: (REPO / "boards" / f).read_text(encoding="utf-8") for f in REAL}
    root, texts = _REAL_TREE["root"], _REAL_TREE["texts"]
    name = data.draw(st.sampled_from(REAL))
    mutated = (_mutate_data if data.draw(st.booleans()) else _mutate_text)(texts[name], data)
    target = root / name
    try:
        target.write_text(mutated, encoding="utf-8")
        try:
            load_boards(root)
        except UserError as exc:
            for line in str(exc).splitlines():
                assert LINE.match(line), line
    finally:
        target.unlink()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_real_board_mutations_fail_cleanly(data: st.DataObject) -> None:
    check_real_mutation(data)


@pytest.mark.slow
@settings(max_examples=3_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_real_board_mutations_fail_cleanly_long(data: st.DataObject) -> None:
    check_real_mutation(data)
