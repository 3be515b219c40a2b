"""Files the commands read at run time that are not Python modules: the Jinja templates (with the release
site's CSS and JS) and the pinned npm bundles the release site serves (ESP Web Tools, esptool-js).

An installed wheel carries them in ``xzbuild/_data/`` (``templates/`` and ``npm/node_modules/``, copied there by
setup.py's build step); an editable install reads the checkout: ``templates/`` at the repository root and the
npm packages ``make install`` puts in ``.venv/npm/node_modules``.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DATA = Path(__file__).resolve().parents[1] / "_data"
CHECKOUT = Path(__file__).resolve().parents[2]


def templates_dir() -> Path:
    """``templates/``: the wheel's copy, else the checkout's."""
    packaged = PACKAGE_DATA / "templates"
    return packaged if packaged.is_dir() else CHECKOUT / "templates"


def bundled_node_modules() -> Path | None:
    """The wheel's ``node_modules`` holding the pinned npm bundles, or None (an editable install)."""
    packaged = PACKAGE_DATA / "npm" / "node_modules"
    return packaged if packaged.is_dir() else None
