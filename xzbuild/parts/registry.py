"""All hardware parts in emission order, and the index from macro spelling to (part, field)."""

from __future__ import annotations

from xzbuild.parts.base import Field, Part

# Emission order of structured blocks; adding a part = one new module + one name here.
PART_MODULES: tuple[str, ...] = (
    "audio", "codec", "i2c", "display", "display_parallel", "display_mipi", "display2", "epaper", "touch",
    "buttons", "leds", "camera", "power", "network", "io_expander", "peripherals",
)


def _load() -> dict[str, Part]:
    import importlib

    parts: dict[str, Part] = {}
    for module_name in PART_MODULES:
        module = importlib.import_module(f"xzbuild.parts.{module_name}")
        part: Part = module.PART
        parts[part.name] = part
    return parts


PARTS: dict[str, Part] = _load()


def _index() -> dict[str, tuple[Part, Field]]:
    index: dict[str, tuple[Part, Field]] = {}
    for part in PARTS.values():
        for f in part.fields:
            for macro in f.macros:
                if macro in index:
                    other = index[macro]
                    raise RuntimeError(f"macro {macro} claimed by {other[0].name}.{other[1].name} and {part.name}.{f.name}")
                index[macro] = (part, f)
    return index


MACRO_INDEX: dict[str, tuple[Part, Field]] = _index()


def part_for_macro(macro: str) -> tuple[Part, Field] | None:
    """The (part, field) that carries ``macro``, if any part knows that spelling."""
    return MACRO_INDEX.get(macro)
