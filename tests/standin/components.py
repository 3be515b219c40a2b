"""The managed components a firmware tree pins (``main/idf_component.yml``, else ``dependencies.lock``) and the
font / emoji names they provide, for the stand-in's CMake step.

The names per xiaozhi-fonts version are read from upstream's own history (each tree's chain names only fonts
its pinned version provides, and upstream CI built it): ``~1.4``-``~1.5.x`` provide ``font_puhui_*``,
``font_puhui_basic_*``, ``font_puhui_common_*``, ``font_awesome_*`` and the ``twemoji_*`` collections; ``~1.6``
adds ``font_noto_basic_*`` and ``noto-emoji_*``; ``~2.0`` (2026-07) replaced them all with
``font_noto_sans_basic_*``, ``font_material_symbols_*`` and ``noto-color-emoji_*``. The ``otto-gif``
collection comes from ``txp666/otto-emoji-gif-component``. Nothing here uses xzbuild.
"""

from __future__ import annotations

import re
from pathlib import Path

FONTS = "78/xiaozhi-fonts"
# (lowest version, text font families, icon font families, emoji collection families) newest first.
XIAOZHI_FONTS = (
    ((2, 0, 0), ("font_noto_sans_basic",), ("font_material_symbols",), ("noto-color-emoji",)),
    ((1, 6, 0), ("font_puhui", "font_puhui_basic", "font_puhui_common", "font_noto_basic"), ("font_awesome",),
     ("twemoji", "noto-emoji")),
    ((0, 0, 0), ("font_puhui", "font_puhui_basic", "font_puhui_common"), ("font_awesome",), ("twemoji",)),
)
OTHER_EMOJI = {"otto-gif": "txp666/otto-emoji-gif-component"}


def _dependencies(project: Path) -> dict[str, str]:
    """name → version spec (or locked version) of the tree's managed components."""
    import yaml

    deps: dict[str, str] = {}
    lock = project / "dependencies.lock"
    if lock.is_file():
        data = yaml.safe_load(lock.read_text(encoding="utf-8")) or {}
        for name, info in (data.get("dependencies") or {}).items():
            deps[str(name)] = str((info or {}).get("version", "")) if isinstance(info, dict) else str(info)
    manifest = project / "main" / "idf_component.yml"
    if manifest.is_file():
        data = yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}
        for name, info in (data.get("dependencies") or {}).items():
            spec = info.get("version", "*") if isinstance(info, dict) else info
            deps.setdefault(str(name), str(spec))
    return deps


def managed_components(project: Path) -> list[str]:
    """Build component names (``namespace__name``) of the pinned managed components."""
    return [name.replace("/", "__") for name in _dependencies(project) if "/" in name]


def _version(spec: str) -> tuple[int, int, int] | None:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", spec)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


def check_fonts(project: Path, named: dict[str, str]) -> str | None:
    """None when every named font / emoji collection is provided by the pinned components, else the problem."""
    deps = _dependencies(project)
    spec = deps.get(FONTS)
    version = _version(spec) if spec else None
    families: dict[str, tuple[str, ...]] = {"text font": (), "icon font": (), "emoji collection": ()}
    if version is not None:
        for lowest, text, icon, emoji in XIAOZHI_FONTS:
            if version >= lowest:
                families = {"text font": text, "icon font": icon, "emoji collection": emoji}
                break
    where = f"{FONTS} {spec}" if spec else f"no {FONTS} in main/idf_component.yml or dependencies.lock"
    for what, name in named.items():
        if not name:
            continue
        if what == "emoji collection" and name in OTHER_EMOJI:
            if OTHER_EMOJI[name] not in deps:
                return f"main/CMakeLists.txt names emoji collection {name}, but {OTHER_EMOJI[name]} is not pinned"
            continue
        pattern = r"_\d+_\d+" if what != "emoji collection" else r"_\d+"
        if not any(re.fullmatch(re.escape(family) + pattern, name) for family in families[what]):
            return (f"main/CMakeLists.txt names {what} {name}, which the tree's pinned components do not provide "
                    f"({where}); the real build would fail")
    return None
