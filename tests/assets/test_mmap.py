"""esp_mmap_assets container: byte identity with the reference packers' outputs, reader checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from assets_gen.mmap import member, pack_mmap, packer_order, read_mmap


@pytest.mark.parametrize(("version", "golden"), [(1, "assets-v1.4.0.bin"), (2, "assets-v2.0.0.bin")])
def test_packer_outputs_are_reproduced(shared_fixtures: Path, version: int, golden: str) -> None:
    """The esp_mmap_assets 1.4.0 / 2.0.0 packers' own outputs for their test inputs (name length 16)."""
    fx = shared_fixtures / "mmap-assets" / "packer"
    names = packer_order([p.name for p in (fx / "inputs").iterdir()])
    packed = pack_mmap([member(n, (fx / "inputs" / n).read_bytes()) for n in names], 16, version)
    assert packed == (fx / golden).read_bytes()


def test_real_expression_bundle_repacks_byte_for_byte(shared_fixtures: Path) -> None:
    """The 18-member esp_emote_expression bundle: read it, repack its members in its order, same bytes."""
    data = (shared_fixtures / "mmap-assets" / "emote" / "esp32_s3_assets.bin").read_bytes()
    bundle = read_mmap(data, 32)
    assert bundle.errors == [] and len(bundle.entries) == 18
    assert pack_mmap([member(e.name, bundle.member(e)) for e in bundle.entries], 32) == data


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (lambda d: d[:4] + b"\0\0\0\0" + d[8:], "checksum"),
        (lambda d: d + b"x", "stored length"),
        (lambda d: d[:12 + 28] + b"AB" + d[12 + 28 + 2:], "checksum"),
    ],
    ids=["checksum", "length", "prefix"],
)
def test_reader_reports_damage(shared_fixtures: Path, mutate, problem: str) -> None:  # type: ignore[no-untyped-def]
    data = (shared_fixtures / "mmap-assets" / "packer" / "assets-v1.4.0.bin").read_bytes()
    assert any(problem in e for e in read_mmap(mutate(data), 16).errors)


def test_long_names_are_cut_like_the_packer() -> None:
    packed = pack_mmap([member("a_very_long_member_name.bin", b"x")], 16)
    [entry] = read_mmap(packed, 16).entries
    assert entry.name == "a_very_long_memb" and not entry.terminated
