"""`load_boards(hardware=False)`, the release matrix's fast path: same board data and errors for everything
the matrix reads, syntax errors anywhere still one file:line:col line, hardware rules left to `boards check`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.model.factory import WIFI_BOARD, make_board_tree
from tests.model.test_validation_table import CASES
from xzbuild.core.errors import UserError, UserErrors
from xzbuild.core.yamlmarks import load_marked
from xzbuild.model import load_boards
from xzbuild.model.boardfile import HARDWARE_KEYS

# Table cases whose error lives in hardware, shared_gpios, config.h or the partition fit: not the matrix's.
HARDWARE_CASES = {"bad-width", "unknown-part-field", "unknown-part", "bad-macro-spelling", "gpio-twice",
                  "gpio-not-on-chip", "gpio-in-branch", "partition-larger-than-flash", "missing-partition-table",
                  "config-h-unknown-item", "config-h-bad-branch", "two-hardware-markers",
                  "width-unknown-name", "width-negative", "width-huge", "volume-over-100", "gpio-num-spelling-clash",
                  "gpio-num-spelling-missing-pin", "gpio-num-spelling-in-parens", "acknowledged-pins-shape"}


def _errors(boards: Path, hardware: bool) -> list[str] | None:
    try:
        load_boards(boards, hardware=hardware)
    except UserErrors as exc:
        return str(exc).splitlines()
    return None


@pytest.mark.parametrize(("case", "file", "old", "new", "expected"), CASES, ids=[c[0] for c in CASES])
def test_matrix_load_reports_what_the_matrix_reads(tmp_path: Path, repo_root: Path, case: str, file: str, old: str,
                                                   new: str, expected: str) -> None:
    boards = make_board_tree(tmp_path, repo_root)
    path = boards / file
    path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    full = _errors(boards, hardware=True)
    fast = _errors(boards, hardware=False)
    assert full is not None
    if case in HARDWARE_CASES:
        assert fast is None, fast  # `boards check` (the full load) reports it
    else:
        assert fast is not None and any(re.search(expected, line) for line in fast), fast
        assert set(fast) <= set(full)  # the same lines, positions included


def test_matrix_load_builds_the_same_variants(tmp_path: Path, repo_root: Path) -> None:
    boards = make_board_tree(tmp_path, repo_root)
    full, fast = load_boards(boards), load_boards(boards, hardware=False)
    assert [b.hardware_loaded for b in fast.boards] == [False, False]
    assert all(b.hardware_loaded for b in full.boards)
    assert [b.hardware for b in fast.boards] == [{}, {}] and all(b.hardware for b in full.boards)
    keys = [(v.full_name, v.target, v.kconfig.symbol if v.kconfig else None, v.effective_sdkconfig, v.build_options,
             v.idf_version_text, v.chip_variant) for v in full.variants()]
    assert keys == [(v.full_name, v.target, v.kconfig.symbol if v.kconfig else None, v.effective_sdkconfig,
                     v.build_options, v.idf_version_text, v.chip_variant) for v in fast.variants()]


def _moved_hardware_first() -> str:
    """WIFI_BOARD with the hardware and config.h sections before kconfig and variants."""
    head, rest = WIFI_BOARD.split("kconfig:\n", 1)
    kv, hw = rest.split("hardware:\n", 1)
    return head + "hardware:\n" + hw + "kconfig:\n" + kv


@pytest.mark.parametrize(("old", "new"), [
    ("- name: demo-wifi-64", "- name: demo wifi 64"),            # a rule on a kept section after skipped ones
    ("    OLED_SSD1306_128X32: y", "    OLED_SSD1306_128X32: yes"),
])
def test_positions_after_skipped_sections_are_exact(tmp_path: Path, old: str, new: str) -> None:
    boards = make_board_tree(tmp_path)
    text = _moved_hardware_first()
    (boards / "demo-wifi.yaml").write_text(text.replace(old, new, 1), encoding="utf-8")
    full, fast = _errors(boards, hardware=True), _errors(boards, hardware=False)
    assert fast and full and fast == full


@pytest.mark.parametrize(("where", "bad"), [
    ("    i2s_ws: 4\n", "    i2s_ws: [4\n"),                      # unclosed flow sequence in hardware
    ("      value: '64'\n", "      value: '64\n"),                 # unclosed quote in the last config.h item
    ("  buttons:\n", "\tbuttons:\n"),                              # a tab in hardware's indentation
])
def test_syntax_errors_in_skipped_sections_still_fail_cleanly(tmp_path: Path, where: str, bad: str) -> None:
    boards = make_board_tree(tmp_path)
    path = boards / "demo-wifi.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace(where, bad, 1), encoding="utf-8")
    fast, full = _errors(boards, hardware=False), _errors(boards, hardware=True)
    assert fast and fast == full
    assert all(re.match(r"^\S+demo-wifi\.yaml:\d+:\d+: invalid YAML", line) for line in fast), fast


@pytest.mark.parametrize(("text", "skipped"), [
    # an anchor in hardware used by the variants after it: the whole file is parsed
    (_moved_hardware_first().replace("    i2s_ws: 4", "    i2s_ws: &ws 4").replace(
        "- name: demo-wifi\n", "- name: demo-wifi\n  build_options: {x: *ws}\n"), ()),
    (WIFI_BOARD.replace("target: esp32s3\n", '"target": esp32s3\n', 1), ()),   # a quoted key at column 0
    ("---\n" + WIFI_BOARD, ()),                                                   # a document marker
    (WIFI_BOARD.replace("\n", "\r\n"), ()),               # CRLF (files read from disk are normalised to \n)
    (WIFI_BOARD + "...\n", ("hardware", "config_h_guard", "config_h")),           # a trailing end marker
    (WIFI_BOARD, ("hardware", "config_h_guard", "config_h")),
])
def test_layouts_it_cannot_skim_are_parsed_whole(tmp_path: Path, text: str, skipped: tuple[str, ...]) -> None:
    path = tmp_path / "b.yaml"
    fast = load_marked(path, text=text, skip=HARDWARE_KEYS)
    whole = load_marked(path, text=text)
    assert fast.skipped == skipped
    expected = {k: v for k, v in whole.data.items() if k not in skipped}
    assert fast.data == expected
    assert {k: v for k, v in fast.marks.items() if k.split(".")[0] not in skipped} == \
        {k: v for k, v in whole.marks.items() if k.split(".")[0] not in skipped}


def test_committed_boards_all_take_the_fast_path(repo_root: Path) -> None:
    bs = load_boards(repo_root / "boards", hardware=False)
    assert bs.boards and not any(b.hardware_loaded for b in bs.boards)


def _section_at(text: str, line: int) -> str | None:
    """The top-level key whose section holds ``line`` (1-based)."""
    found = None
    for number, row in enumerate(text.split("\n"), 1):
        if number > line:
            break
        m = re.match(r"([A-Za-z_]\w*):", row)
        if m:
            found = m.group(1)
    return found


_CHARS = list(":-[]{}!&*#|>'\"\t %@`,?\n\\ab0.")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_skimming_agrees_with_a_full_parse_on_mutated_text(data: st.DataObject) -> None:
    """Random text edits anywhere: the skimmed parse fails exactly when the full parse does (same error),
    and otherwise yields the full parse's data and marks for every kept section."""
    text = data.draw(st.sampled_from([WIFI_BOARD, _moved_hardware_first()]))
    for _ in range(data.draw(st.integers(1, 3))):
        pos = data.draw(st.integers(0, len(text)))
        if data.draw(st.booleans()):
            text = text[:pos] + "".join(data.draw(st.lists(st.sampled_from(_CHARS), min_size=1, max_size=4))) + text[pos:]
        else:
            text = text[:pos] + text[pos + data.draw(st.integers(1, 12)):]
    path = Path("b.yaml")
    try:
        whole = load_marked(path, text=text)
    except UserError as exc:
        try:
            fast = load_marked(path, text=text, skip=HARDWARE_KEYS)
        except UserError as again:
            assert str(again) == str(exc)
            return
        # Only syntax is checked in skipped sections: tags, anchors, duplicate keys there are `boards check`'s.
        assert exc.location is not None and _section_at(text, exc.location.line) in fast.skipped, str(exc)
        return
    fast = load_marked(path, text=text, skip=HARDWARE_KEYS)
    skipped = set(fast.skipped)
    assert isinstance(whole.data, dict) or not skipped
    if isinstance(whole.data, dict):
        assert fast.data == {k: v for k, v in whole.data.items() if k not in skipped}
        assert skipped <= set(whole.data)
    assert {k: v for k, v in fast.marks.items() if k.split(".")[0] not in skipped} == \
        {k: v for k, v in whole.marks.items() if k.split(".")[0] not in skipped}
