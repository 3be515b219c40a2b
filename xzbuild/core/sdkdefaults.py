"""ESP-IDF's rule for the sdkconfig defaults files a build loads (``tools/cmake/project.cmake`` and
``kconfig.cmake``): the ``SDKCONFIG_DEFAULTS`` list in order — when it is not given, ``sdkconfig.defaults`` in
the project root if that file exists, else nothing — and right after each file ``F`` of the list its
companion ``F.<IDF_TARGET>`` when that exists. A project without a root ``sdkconfig.defaults`` (and no
``SDKCONFIG_DEFAULTS``) therefore loads no ``sdkconfig.defaults.<target>`` either, and gets ESP-IDF's Kconfig
defaults (2 MB flash, the single-app partition table).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xzbuild.core.errors import Location, UserError

ROOT_DEFAULTS = "sdkconfig.defaults"


def defaults_list(project: Path, given: Sequence[str] | None = None) -> list[str]:
    """``SDKCONFIG_DEFAULTS`` as ESP-IDF settles it: ``given`` (a list already split on ``;``), else the root
    ``sdkconfig.defaults`` when it exists, else empty."""
    if given is not None:
        return [entry for entry in given if entry]
    return [ROOT_DEFAULTS] if (project / ROOT_DEFAULTS).is_file() else []


def defaults_files(project: Path, target: str, given: Sequence[str] | None = None) -> list[Path]:
    """The files ESP-IDF loads, in order: each entry of the list, then its ``.<target>`` companion if it
    exists. A listed file that does not exist is ESP-IDF's configure error."""
    files: list[Path] = []
    for entry in defaults_list(project, given):
        path = Path(entry) if Path(entry).is_absolute() else project / entry
        if not path.is_file():
            raise UserError(f"SDKCONFIG_DEFAULTS '{entry}' does not exist (ESP-IDF stops here); create it or "
                            "drop it from the list", Location(str(path)))
        files.append(path)
        companion = path.with_name(f"{path.name}.{target}")
        if companion.is_file():
            files.append(companion)
    return files
