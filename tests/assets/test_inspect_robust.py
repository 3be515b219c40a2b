"""inspect never crashes: arbitrary bytes and random corruptions of a real bundle give findings, not exceptions."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from assets_gen.inspect import inspect_bundle
from assets_gen.report import format_report

GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "assets" / "assets.bin"


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600))
@example(b"\0\0\0\1" + b"\0" * 7 + b",")  # body length claims a table the file does not have
def test_random_bytes(data: bytes) -> None:
    report = inspect_bundle(data, partition_size=4096)
    format_report(report, "x")
    if len(data) < 12:
        assert not report.ok


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=2200), st.integers(min_value=0, max_value=255)),
                min_size=1, max_size=6))
def test_corrupted_header_table_and_index(edits: list[tuple[int, int]]) -> None:
    golden = GOLDEN.read_bytes()
    data = bytearray(golden)
    # Offsets up to 2200 hit the header, the 24 table entries and the start of the font.
    for offset, value in edits:
        data[offset] = value
    report = inspect_bundle(bytes(data))  # must not raise, whatever the damage
    format_report(report, "x")
    header_intact = data[:12] == golden[:12]
    if header_intact and (sum(data) - sum(golden)) % 0x10000:
        assert any("checksum mismatch" in e for e in report.errors)
    if bytes(data) == golden:
        assert report.ok


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.sampled_from(
        ["angry.png", "srmodels.bin", "font_noto_sans_common_20_4.bin", "#FFFFFF", "nope", "common", "noto-v1"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(["name", "file", "eaf", "charset", "size", "bpp", "bundle", "light", "dark", "text_color",
                         "background_image", "commands", "language", "command", "text", "action"]), children,
        max_size=4),
    max_leaves=12,
)
_keys = st.sampled_from(["version", "srmodels", "text_font", "text_font_meta", "emoji_collection", "extra_files",
                         "skin", "multinet_model", "Text_Font", "hide_subtitle"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_keys, _json, max_size=6))
def test_arbitrary_index_values(index: dict[str, object]) -> None:
    import json

    from assets_gen.container import pack_container, read_container

    c = read_container(GOLDEN.read_bytes())
    members = [(e.name, c.member(e.name) or b"") for e in c.entries if e.name != "index.json"]
    data = pack_container([*members, ("index.json", json.dumps(index).encode())])
    report = inspect_bundle(data)  # must not raise, whatever the index says
    assert report.index == index
