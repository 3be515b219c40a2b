"""srmodels.bin: byte identity with ESP-SR's packer, loader-faithful reading, model dir validation."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from assets_gen.srmodels import load_model_dir, pack_srmodels, read_srmodels
from xzbuild.core.errors import UserError


def test_pack_matches_reference(shared_fixtures: Path, model_dir: Path) -> None:
    packed = pack_srmodels([load_model_dir(model_dir)])
    assert packed == (shared_fixtures / "esp-sr" / "srmodels.bin").read_bytes()
    pack = read_srmodels(packed)
    assert pack.errors == [] and pack.warnings == []
    [model] = pack.models
    assert model.name == "wn9s_nihaoxiaozhi"
    assert model.files == [("_MODEL_INFO_", 160, 46), ("wn9_data", 206, 124545), ("wn9_index", 124751, 1200)]
    assert model.info == "wakenet9s_tts2h8v2_你好小智_3_0.630_0.635"


def test_models_are_sorted_by_name(tmp_path: Path, model_dir: Path) -> None:
    other = tmp_path / "wn9s_aaa"
    other.mkdir()
    (other / "_MODEL_INFO_").write_text("x\n")
    (other / "wn9_data").write_bytes(b"\1\2\3")
    a, b = load_model_dir(model_dir), load_model_dir(other)
    assert pack_srmodels([a, b]) == pack_srmodels([b, a])
    assert [m.name for m in read_srmodels(pack_srmodels([a, b])).models] == ["wn9s_aaa", "wn9s_nihaoxiaozhi"]


def test_out_of_bounds_file_is_reported(shared_fixtures: Path) -> None:
    data = bytearray((shared_fixtures / "esp-sr" / "srmodels.bin").read_bytes())
    struct.pack_into("<I", data, 4 + 36 + 40 + 32 + 4, 10**6)  # length of wn9_data
    assert any("past the end" in e for e in read_srmodels(bytes(data)).errors)
    assert read_srmodels(b"\1\0").errors


def test_model_dir_validation(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a model directory"):
        load_model_dir(tmp_path / "missing")
    empty = tmp_path / "wn9s_empty"
    empty.mkdir()
    with pytest.raises(UserError, match="empty"):
        load_model_dir(empty)
    (empty / "wn9_data").write_bytes(b"x")
    with pytest.raises(UserError, match="_MODEL_INFO_"):
        load_model_dir(empty)
    (empty / "_MODEL_INFO_").write_text("x")
    (empty / ("f" * 40)).write_bytes(b"x")
    with pytest.raises(UserError, match="the limit is 31"):
        load_model_dir(empty)
