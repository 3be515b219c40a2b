"""sdkconfig keys must be Kconfig symbols someone declares: Kconfig silently ignores unknown ones, so a typo
(``CAMERA_GCO308`` for ``CAMERA_GC0308``) builds a firmware without the option and nobody notices."""

from __future__ import annotations

import difflib
import functools
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from xzbuild.model.types import BoardSet

SYMBOLS_FILE = Path(__file__).with_name("kconfig_symbols.yaml")


@functools.cache
def known_symbols() -> frozenset[str]:
    """Symbols of the firmware's Kconfig and the ESP-IDF/component options boards are known to set."""
    data = yaml.safe_load(SYMBOLS_FILE.read_text(encoding="utf-8"))
    return frozenset(str(s) for group in data.values() for s in group)


def unknown_key_warnings(bs: BoardSet) -> list[str]:
    """One warning per variant sdkconfig key no known Kconfig declares (with a did-you-mean)."""
    known = set(known_symbols())
    for layer in bs.firmware.sdkconfig_defaults.values():
        known.update(layer)
    known.update(k.symbol for b in bs.boards for k in b.kconfig)
    out: list[str] = []
    for board in bs.boards:
        for v in board.variants:
            for line in v.sdkconfig_append:
                short = line.split("=", 1)[0].removeprefix("CONFIG_")
                if short in known or short.startswith("BOARD_TYPE_"):
                    continue
                close = difflib.get_close_matches(short, known, n=1, cutoff=0.85)
                hint = f"did you mean {close[0]}?" if close else \
                    f"check the spelling (or add it to {SYMBOLS_FILE.name} if ESP-IDF declares it)"
                key = f"{v.path_key}.sdkconfig.{short}"
                out.append(f"{v.location(f'sdkconfig.{short}')}: {key}: no Kconfig symbol {short} is known; "
                           f"Kconfig ignores unknown keys; {hint}")
    return out
