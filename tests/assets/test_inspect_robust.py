"""inspect never crashes: arbitrary bytes and random corruptions of a real bundle give findings, not exceptions."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assets_gen.inspect import inspect_bundle
from assets_gen.report import format_report

GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "assets" / "assets.bin"


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600))
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
