"""One click parameter type for every numeric option: finite, within its bounds, the bound in the message.

click's ``FloatRange`` lets ``nan`` through (every comparison with it is false) and ``inf`` when a side is open;
``Bounded`` refuses both and always names the allowed range (issue 39: ``--fail-above nan``, ``--wait nan``
waiting forever, ``--jobs 0``, ``--psram -5``, ``vboard --port -1``).
"""

from __future__ import annotations

import math
from typing import Any

import click


class Bounded(click.ParamType):
    """An int or float option between ``low`` and ``high`` (inclusive), finite."""

    def __init__(self, kind: type, low: float, high: float, unit: str = "") -> None:
        self.kind = kind
        self.low, self.high = low, high
        self.unit = unit
        self.name = "integer" if kind is int else "number"

    def _range(self) -> str:
        def show(x: float) -> str:
            return str(int(x)) if float(x).is_integer() else f"{x:g}"

        return f"between {show(self.low)} and {show(self.high)}{(' ' + self.unit) if self.unit else ''}"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number: float
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip()
            try:
                number = int(text, 10) if self.kind is int else float(text)
            except ValueError:
                self.fail(f"{value!r} is not {'an integer' if self.kind is int else 'a number'}; expected a value "
                          f"{self._range()}", param, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number; expected a value {self._range()}", param, ctx)
        if not self.low <= number <= self.high:
            self.fail(f"{value!r} is out of range; expected a value {self._range()}", param, ctx)
        return number

    def __repr__(self) -> str:
        return f"Bounded({self.kind.__name__}, {self.low}, {self.high})"
