"""The committed boards/ load cleanly and reproduce upstream's own variant listing."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from xzbuild.model import BoardSet, load_boards
from xzbuild.model.validate import offered_build_options


@pytest.fixture(scope="module")
def board_set(repo_root: Path) -> BoardSet:
    return load_boards(repo_root / "boards")


def test_counts_match_the_tree(board_set: BoardSet) -> None:
    # 146 config.json dirs + 2 dirs upstream keeps without one; 177 builds (P4/P4X pairs expanded).
    assert sum(b.has_config_json for b in board_set.boards) == 146
    assert len(board_set.boards) == 148
    assert len(board_set.variants()) == 177
    assert Counter(v.target for v in board_set.variants()) == {
        "esp32s3": 118, "esp32p4": 28, "esp32c3": 9, "esp32c6": 9, "esp32": 7, "esp32c5": 4, "esp32s31": 2}


def test_listing_matches_upstream_build_py(board_set: BoardSet, shared_fixtures: Path) -> None:
    ref = json.loads((shared_fixtures / "upstream" / "list-boards-idf-6.0.2.json").read_text())
    mine = [v for v in board_set.variants() if v.supports_idf("6.0.2")]
    assert [(v.board.dir, v.name) for v in mine] == [(r["board"], r["name"]) for r in ref]
    for v, r in zip(mine, ref, strict=True):
        assert v.kconfig is not None
        got = {"full_name": v.full_name, "type": v.board.type, "target": v.target, "config": v.kconfig.config,
               "display_name": v.kconfig.label, "wake_word_supported": v.wake_word_supported}
        assert got == {k: r[k] for k in got}, v.name


def test_effective_flash_and_partition_tables(board_set: BoardSet) -> None:
    variants = board_set.variants()
    assert Counter(v.flash_size for v in variants) == {"16MB": 147, "8MB": 17, "4MB": 9, "32MB": 4}
    assert Counter(v.partition_table for v in variants)["partitions/v2/16m_c3.csv"] == 14
    pair = [v for v in variants if v.board.dir == "waveshare/esp32-p4-wifi6-touch-lcd"]
    assert len(pair) == 18 and {v.chip_variant for v in pair} == {"p4", "p4x"}
    p4 = next(v for v in pair if v.name == "esp32-p4-wifi6-touch-lcd-4b")
    p4x = next(v for v in pair if v.name == "esp32-p4x-wifi6-touch-lcd-4b")
    assert p4.sdkconfig_append[-2:] == ["CONFIG_ESP32P4_SELECTS_REV_LESS_V3=y", "CONFIG_ESP32P4_REV_MIN_100=y"]
    assert p4.sdkconfig_append[:-2] == p4x.sdkconfig_append
    assert p4x.legacy_names == ["esp32-p4-wifi6-touch-lcd-4b-p4x"]


def test_idf_gating(board_set: BoardSet) -> None:
    assert len([v for v in board_set.variants() if v.supports_idf("6.1")]) == 176
    assert len([v for v in board_set.variants() if v.supports_idf("5.5.4")]) == 174


def test_offered_build_options_follow_upstream_counts(board_set: BoardSet) -> None:
    every = Counter(k for v in board_set.variants() for k in offered_build_options(board_set, v))
    assert every == {"display_style": 152, "multiline_chat": 152, "wifi_provisioning": 145, "camera_hmirror": 52,
                     "camera_vflip": 52, "aec_mode": 44, "display_model": 13}
    at_602 = Counter(k for v in board_set.variants() if v.supports_idf("6.0.2")
                     for k in offered_build_options(board_set, v))
    assert (at_602["display_style"], at_602["wifi_provisioning"], at_602["camera_hmirror"]) == (150, 143, 51)
    box = board_set.variant("esp-box-3")
    assert offered_build_options(board_set, box)["display_style"] == ["default", "wechat", "emote"]
