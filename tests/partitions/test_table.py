"""Partition tables: gen_esp32part byte identity, auto-placement, validation errors with file:line."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xzbuild.core.errors import UserError, UserErrors
from xzbuild.partitions import (
    APP,
    DATA,
    Partition,
    PartitionTable,
    check_app_fits,
    check_fits_flash,
    format_csv,
    parse_binary,
    parse_csv,
    parse_flash_size,
    read_csv,
)


@pytest.mark.parametrize("name, flash", [("16m", "16MB"), ("4m", "4MB")])
def test_binary_identical_to_gen_esp32part(shared_fixtures: Path, name: str, flash: str) -> None:
    table = read_csv(shared_fixtures / "partitions" / f"{name}.csv")
    check_fits_flash(table, flash)
    expected = (shared_fixtures / "partitions" / f"{name}.bin").read_bytes()
    assert table.to_binary() == expected
    assert len(expected) == 0xC00


def test_binary_reads_back(shared_fixtures: Path) -> None:
    data = (shared_fixtures / "partitions" / "16m.bin").read_bytes()
    table = parse_binary(data)
    assert [(p.name, p.type_name, p.subtype_name, p.offset, p.size) for p in table] == [
        ("nvs", "data", "nvs", 0x9000, 0x4000),
        ("otadata", "data", "ota", 0xD000, 0x2000),
        ("phy_init", "data", "phy", 0xF000, 0x1000),
        ("ota_0", "app", "ota_0", 0x20000, 0x3F0000),
        ("ota_1", "app", "ota_1", 0x410000, 0x3F0000),
        ("assets", "data", "spiffs", 0x800000, 0x800000),
    ]
    corrupt = bytearray(data)
    corrupt[0x40 + 8] ^= 1  # flip a size bit in the third entry: MD5 row no longer matches
    with pytest.raises(UserError, match="MD5"):
        parse_binary(bytes(corrupt))


# A 32 MB layout with automatic offsets for the first four rows (written here as test data).
AUTO_32M = """\
# Name, Type, SubType, Offset, Size, Flags
nvsfactory, data, nvs, , 200K,
nvs, data, nvs, , 840K,
otadata, data, ota, , 0x2000,
phy_init, data, phy, , 0x1000,
ota_0, app, ota_0, 0x200000, 4M,
ota_1, app, ota_1, 0x600000, 4M,
assets, data, spiffs, 0xA00000, 16M
"""


def test_auto_placement_and_units() -> None:
    table = parse_csv(AUTO_32M, "t.csv")
    assert [(p.name, p.offset, p.size) for p in table] == [
        ("nvsfactory", 0x9000, 0x32000),
        ("nvs", 0x3B000, 0xD2000),
        ("otadata", 0x10D000, 0x2000),
        ("phy_init", 0x10F000, 0x1000),
        ("ota_0", 0x200000, 0x400000),
        ("ota_1", 0x600000, 0x400000),
        ("assets", 0xA00000, 0x1000000),
    ]
    check_fits_flash(table, "32MB")
    with pytest.raises(UserError, match=r"t.csv:8: partitions end at 0x1a00000 .* flash is 16 MB"):
        check_fits_flash(table, "16MB")


def test_app_auto_offset_rounds_up_to_64k_and_negative_size() -> None:
    table = parse_csv("nvs,data,nvs,,0x5000\napp,app,factory,,-0x200000\nx,data,0x40,,4k,readonly:encrypted\n")
    nvs, app, x = table
    assert (nvs.offset, app.offset, app.size) == (0x9000, 0x10000, 0x1F0000)
    assert (x.offset, x.subtype, x.flags) == (0x200000, 0x40, ["encrypted", "readonly"])
    assert x.to_binary()[28:32] == b"\x03\x00\x00\x00"


def test_env_expansion_and_find() -> None:
    table = parse_csv("fac,app,factory,$APP_OFF,1M\n", env={"APP_OFF": "0x10000"})
    assert table.find("fac") is not None
    assert table.find(type="app", subtype="factory") is table.boot_app()
    assert table.find(type="data") is None
    assert table.find("missing") is None


def test_boot_app_prefers_factory_then_lowest_ota() -> None:
    table = parse_csv("b,app,ota_1,0x10000,1M\na,app,ota_0,,1M\n")
    assert table.boot_app() is not None and table.boot_app().name == "a"  # type: ignore[union-attr]


def test_app_fit_check_names_numbers(shared_fixtures: Path) -> None:
    table = read_csv(shared_fixtures / "partitions" / "4m.csv")
    check_app_fits(table, 0x2F0000)
    with pytest.raises(UserError) as err:
        check_app_fits(table, 0x2F0001, "xiaozhi.bin")
    assert str(err.value).startswith(f"{shared_fixtures / 'partitions' / '4m.csv'}:6: xiaozhi.bin is 0x2f0001")
    assert "1 B too large" in str(err.value)


@pytest.mark.parametrize(
    "csv, line, message",
    [
        ("nvs,data,nvs,0x9000,0x4000\nbad,,nvs,,1K\n", 2, "partition type is empty"),
        ("a,app,,0x10000,1M\n", 1, "app partition has an empty subtype"),
        ("a,app,ota_99,0x10000,1M\n", 1, "invalid subtype for type app 'ota_99'"),
        ("a,blob,0,0x10000,1M\n", 1, "invalid partition type 'blob'"),
        ("# c\n\na,data,nvs,0x9000,\n", 3, "partition size is empty"),
        ("a,data,nvs,0x9000,12Q\n", 1, "invalid size '12Q'"),
        ("a,data,nvs,0x9000,0x4000,secret\n", 1, "unknown flag 'secret'"),
        ("a,data,nvs,0x7000,0x4000\n", 1, "overlaps the partition table sector"),
        ("a,data,nvs,,0x4000\nb,data,nvs,0xa000,0x4000\n", 2, "overlaps the previous partition"),
        ("a,data,nvs,,0x4000\nf,app,factory,0x18000,1M\n", 2, "not aligned to 0x10000"),
        ("a,data,nvs,,0x4000\nf,app,factory,,0x1800\n", 2, "not a multiple of 0x1000"),
        ("a,data,nvs,,0x4000\na,data,phy,,0x1000\n", 2, "already used on line 1"),
        ("o,data,ota,,0x1000\n", 1, "must be exactly 0x2000"),
        ("o,data,ota,,0x2000\np,data,ota,,0x2000\n", 2, "a second otadata"),
        ("n,data,nvs,,0x2000\n", 1, "at least 0x3000"),
        ("o,data,ota,,0x2000,readonly\n", 1, "always read-write"),
        ("x" + "\u00e9" * 8 + ",data,nvs,,0x4000\n", 1, "splits a UTF-8 character"),
        ("# only a comment\n", 1, "has no partitions"),
        ("a,data,nvs,$NOPE,0x4000\n", 1, "unknown variable $NOPE"),
        (",data,nvs,,0x4000\n", 1, "partition name is empty"),
        ("d,data,spiffs,0x9800,0x1000\n", 1, "not aligned to 0x1000"),
    ],
)
def test_malformed_csv_points_to_line(csv: str, line: int, message: str) -> None:
    with pytest.raises(UserError) as err:
        parse_csv(csv, "bad.csv", env={})
    text = str(err.value)
    assert f"bad.csv:{line}: " in text, text
    assert message in text, text


def test_every_bad_row_is_reported() -> None:
    with pytest.raises(UserErrors) as err:
        parse_csv("a,,nvs,,1K\nb,data,nvs,,1Q\nc,data,nvs,,0x4000,x\n", "m.csv")
    assert [str(e).split(":")[1] for e in err.value.errors] == ["1", "2", "3"]


def test_too_many_entries_for_the_sector() -> None:
    rows = "".join(f"p{i},data,0x40,,0x1000\n" for i in range(95))
    with pytest.raises(UserError, match="limit is 3071"):
        parse_csv(rows, "big.csv")
    parse_csv("".join(f"p{i},data,0x40,,0x1000\n" for i in range(94)), "ok.csv")


@pytest.mark.parametrize("text, size", [("16MB", 16 << 20), ("4m", 4 << 20), ("128MB", 128 << 20)])
def test_flash_size(text: str, size: int) -> None:
    assert parse_flash_size(text) == size


@pytest.mark.parametrize("text", ["3MB", "16GB", "", "x"])
def test_bad_flash_size(text: str) -> None:
    with pytest.raises(UserError, match="invalid flash size"):
        parse_flash_size(text)


_sizes = st.integers(min_value=1, max_value=64).map(lambda n: n * 0x1000)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["app", "data"]), _sizes, st.booleans()), min_size=1, max_size=20))
def test_property_resolve_write_read_roundtrip(rows: list[tuple[str, int, bool]]) -> None:
    lines = []
    for i, (ptype, size, explicit_units) in enumerate(rows):
        sub = f"ota_{i % 16}" if ptype == "app" else "spiffs"
        size_text = f"{size // 1024}K" if explicit_units else hex(size)
        lines.append(f"p{i}, {ptype}, {sub}, , {size_text},")
    table = parse_csv("\n".join(lines), "gen.csv")
    # invariants of auto-placement: in order, aligned, no overlaps, sizes as written
    prev_end = 0x9000
    for p, (ptype, size, _) in zip(table, rows, strict=True):
        assert p.offset >= prev_end and p.offset % (0x10000 if ptype == "app" else 0x1000) == 0
        assert p.size == size
        prev_end = p.end
    binary = table.to_binary()
    md5_row = binary[32 * len(table) : 32 * len(table) + 32]
    assert len(binary) == 0xC00 and md5_row[16:] == hashlib.md5(binary[: 32 * len(table)]).digest()
    assert set(binary[32 * len(table) + 32 :]) == {0xFF}
    back = parse_binary(binary)
    assert [(p.name, p.type, p.subtype, p.offset, p.size) for p in back] == [
        (p.name, p.type, p.subtype, p.offset, p.size) for p in table]
    again = parse_csv(format_csv(table), "round.csv")
    assert again.to_binary() == binary


def test_partition_types() -> None:
    p = Partition("x", APP, 0x10, 0x20000, 0x1000)
    assert (p.type_name, p.subtype_name, p.end) == ("app", "ota_0", 0x21000)
    assert Partition("y", DATA, 0x99, 0, 0).subtype_name == "153"
    assert len(PartitionTable((p,))) == 1


_cells = st.one_of(
    st.sampled_from(["", "app", "data", "nvs", "ota_0", "factory", "spiffs", "0x40", "0x9000", "0x10000", "4K",
                     "1M", "-0x100000", "-1", "0x1_0000", "99999999999", "0xFFFFFFFF", "encrypted", "readonly:x",
                     "$HOME", "${X}", "٣", " ", "\t", "#", "0b101", "1e3", "0o7"]),
    st.text(max_size=6),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_cells, min_size=0, max_size=7).map(", ".join), min_size=0, max_size=8))
def test_property_malformed_csv_gives_user_errors_only(rows: list[str]) -> None:
    try:
        table = parse_csv("\n".join(rows), "fuzz.csv", env={"X": "0x20000"})
    except UserError as exc:
        assert str(exc).startswith("fuzz.csv") or all(str(e).startswith("fuzz.csv") for e in
                                                      getattr(exc, "errors", [exc]))
        return
    assert len(table.to_binary()) == 0xC00


def test_long_name_is_truncated_like_gen_esp32part() -> None:
    """gen_esp32part packs names with struct "16s" (first 16 bytes kept); the table warns at the row."""
    import struct

    table = parse_csv("a-very-long-partition,data,nvs,,0x4000\n", "long.csv", env={})
    assert [p.name for p in table] == ["a-very-long-part"]
    assert table.warnings and table.warnings[0].startswith("long.csv:1: partition name 'a-very-long-partition'")
    reference = struct.pack("<2sBBLL16sL", b"\xaa\x50", 1, 2, 0x9000, 0x4000, b"a-very-long-partition", 0)
    assert table.to_binary()[:32] == reference

