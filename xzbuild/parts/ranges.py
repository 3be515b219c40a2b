"""Plausible ranges of integer fields: a value outside is a typo (``width: -5``, ``99999``), not hardware.

Fields not listed take ``DEFAULT_RANGE`` (a non-negative C ``int``). Bounds are generous on purpose: they
catch impossible values, not unusual boards.
"""

from __future__ import annotations

DEFAULT_RANGE = (0, 2**31 - 1)

_PIXELS = (1, 4096)  # the largest panels the firmware drives are 1280 px; 4096 leaves headroom
_OFFSET = (-4096, 4096)

RANGES: dict[str, tuple[int, int]] = {
    "audio.input_sample_rate": (8000, 192000),
    "audio.output_sample_rate": (8000, 192000),
    "audio.input_channels": (1, 8),
    "audio.output_channels": (1, 8),
    "audio.default_output_volume": (0, 100),
    "display.width": _PIXELS,
    "display.height": _PIXELS,
    "display2.width": _PIXELS,
    "display2.height": _PIXELS,
    "display.offset_x": _OFFSET,
    "display.offset_y": _OFFSET,
    "display.bits_per_pixel": (1, 32),
    "display.bit_per_pixel": (1, 32),
    "display.spi_clock_hz": (1, 120_000_000),
    "camera.xclk_freq_hz": (1, 120_000_000),
    "leds.builtin_count": (1, 4096),
    "network.echo_uart_rts": (-1, 63),
    "network.echo_uart_cts": (-1, 63),
    "peripherals.motor_speed_min": (0, 100),
    "peripherals.motor_speed_max": (0, 100),
}


def range_problem(field_path: str, value: int) -> str | None:
    """Error text if ``value`` is outside the plausible range of ``part.field`` (None when fine)."""
    low, high = RANGES.get(field_path, DEFAULT_RANGE)
    if low <= value <= high:
        return None
    return f"out of range; expected {low}..{high}"
