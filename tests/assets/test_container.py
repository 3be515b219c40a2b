"""assets.bin container: byte identity with the upstream builder, firmware-faithful reading, bad names."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assets_gen.container import ENTRY, HEADER, checksum16, pack_container, read_container
from xzbuild.core.errors import UserError


def _members(data: bytes) -> list[tuple[str, bytes]]:
    c = read_container(data)
    out = []
    for e in c.entries:
        member = c.member(e.name)
        assert member is not None
        out.append((e.name, member))
    return out


def test_repack_of_golden_bundle_is_identical(assets_fx: Path) -> None:
    golden = (assets_fx / "assets.bin").read_bytes()
    c = read_container(golden)
    assert c.errors == [] and c.warnings == []
    assert (c.file_count, c.stored_checksum, c.body_len) == (24, 0x1C25, 308344)
    names = [e.name for e in c.entries]
    assert names[:3] == ["font_noto_sans_common_20_4.bin", "srmodels.bin", "index.json"]
    # Feed the members in reverse: the writer must restore upstream's (extension, stem) order itself.
    assert pack_container(list(reversed(_members(golden)))) == golden


def test_offsets_count_from_table_end(assets_fx: Path) -> None:
    c = read_container((assets_fx / "assets.bin").read_bytes())
    table_end = HEADER.size + ENTRY.size * c.file_count
    by_name = {e.name: e for e in c.entries}
    assert by_name["srmodels.bin"].offset - table_end == 61334
    assert by_name["angry.png"].offset - table_end == 189342


def _corrupt(data: bytes, offset: int, value: bytes) -> bytes:
    return data[:offset] + value + data[offset + len(value):]


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: _corrupt(d, len(d) - 1, bytes([d[-1] ^ 0xFF])), "checksum mismatch"),
        (lambda d: d[:-5], "body length field"),
        (lambda d: _corrupt(d, 0, struct.pack("<I", 9999)), "table entries need"),
        (lambda d: _corrupt(d, 12, b"x" * 32), "no NUL"),
    ],
    ids=["checksum", "truncated", "file-count", "name-unterminated"],
)
def test_corruptions_are_reported(mutate, needle: str) -> None:  # type: ignore[no-untyped-def]
    data = pack_container([("a.bin", b"hello"), ("index.json", b"{}")])
    found = read_container(mutate(data)).errors
    assert any(needle in e for e in found), found


def test_missing_zz_prefix_is_an_error_even_with_valid_checksum() -> None:
    data = bytearray(pack_container([("a.bin", b"hello")]))
    prefix_at = HEADER.size + ENTRY.size
    data[prefix_at : prefix_at + 2] = b"QQ"
    struct.pack_into("<I", data, 4, checksum16(bytes(data[12:])))
    c = read_container(bytes(data))
    assert any("'ZZ'" in e for e in c.errors)
    assert c.member("a.bin") is None


def test_partition_size_is_checked() -> None:
    data = pack_container([("a.bin", b"x" * 100)])
    assert read_container(data, partition_size=len(data)).errors == []
    assert any("partition holds" in e for e in read_container(data, partition_size=64).errors)


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("emoji_😀.png", "printable ASCII"),
        ("ä.png", "printable ASCII"),
        ("a" * 29 + ".png", "the limit is 31"),
        ("config.json", "silently drops"),
        ("", "empty name"),
        ("dir/a.png", "path separators"),
    ],
)
def test_bad_member_names(name: str, needle: str) -> None:
    with pytest.raises(UserError, match=needle):
        pack_container([(name, b"data")])


def test_duplicate_member_names() -> None:
    with pytest.raises(UserError, match="appears twice"):
        pack_container([("a.png", b"1"), ("a.png", b"2")])


_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=20)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.tuples(_names, st.sampled_from([".bin", ".png", ".json", ".gif", ""])),
                       st.binary(max_size=300), max_size=8))
def test_pack_read_roundtrip(members: dict[tuple[str, str], bytes]) -> None:
    items = [(stem + ext, data) for (stem, ext), data in members.items() if stem + ext != "config.json"]
    if len({n for n, _ in items}) != len(items):
        return
    data = pack_container(items)
    c = read_container(data, partition_size=len(data))
    assert c.errors == []
    assert {e.name: c.member(e.name) for e in c.entries} == dict(items)
    assert pack_container(list(reversed(items))) == data
