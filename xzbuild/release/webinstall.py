"""ESP Web Tools inside the site: find the npm package, copy its browser bundle, judge what a manifest does.

The bundle is ``esp-web-tools/dist/web`` (the package's own rollup build: ``install-button.js`` plus the
chunks it imports). It is copied into the site at build time so a page needs no CDN, and the site records the
package version, the npm tarball integrity from npm's lockfile and a SHA-384 per copied file.

What a manifest makes the installer do follows esp-web-tools 10.x ``src/install-dialog.ts``: without Improv
Serial (xiaozhi does not implement it, and ``new_install_improv_wait_time: 0`` skips the probe) the dashboard's
Install either asks with an "Erase device" checkbox (``new_install_prompt_erase: true``) or erases the whole
flash before writing ("Default is to erase a device that does not support Improv Serial").
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xzbuild.core.errors import UserError
from xzbuild.core.resources import bundled_node_modules

PACKAGE = "esp-web-tools"
PINNED_VERSION = "10.4.0"  # what the Makefile installs and the browser test checks against
ENTRY = "install-button.js"
HOW_TO_GET = (f"install it with `npm install --prefix .venv/npm {PACKAGE}@{PINNED_VERSION}` (`make install` does) "
              "or pass --web-tools DIR (the package directory); an installed xzbuild wheel carries it")


@dataclass(frozen=True)
class WebTools:
    """The located package: its directory, version, npm integrity and the browser bundle's files."""

    root: Path
    version: str
    npm_integrity: str | None
    files: dict[str, bytes] = field(repr=False)  # name → bytes, every file of dist/web

    def integrity(self) -> dict[str, str]:
        """Subresource-integrity strings (``sha384-…``) per bundle file."""
        return {name: "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()
                for name, data in sorted(self.files.items())}


def _candidates() -> list[Path]:
    env = os.environ.get("XZBUILD_WEB_TOOLS")
    roots = [Path(env)] if env else []
    roots += [Path("node_modules") / PACKAGE, Path(".venv/npm/node_modules") / PACKAGE,
              Path(sys.prefix) / "npm" / "node_modules" / PACKAGE]
    bundled = bundled_node_modules()  # the installed wheel's copy (pinned, taken when the wheel was built)
    if bundled is not None:
        roots.append(bundled / PACKAGE)
    return roots


def find_web_tools(explicit: Path | None = None) -> WebTools:
    """Locate and read the package (``explicit``, else $XZBUILD_WEB_TOOLS, ./node_modules, the venv's npm dir,
    the copy an installed wheel carries)."""
    roots = [explicit] if explicit is not None else _candidates()
    for root in roots:
        if (root / PACKAGE / "package.json").is_file():
            root = root / PACKAGE  # a node_modules dir was given
        web = root / "dist" / "web"
        if (root / "package.json").is_file() and (web / ENTRY).is_file():
            return _read(root, web)
        if explicit is not None:
            raise UserError(f"--web-tools {root}: not an {PACKAGE} package with dist/web/{ENTRY}; {HOW_TO_GET}")
    looked = ", ".join(str(r) for r in roots)
    raise UserError(f"{PACKAGE} not found (looked in {looked}); {HOW_TO_GET}")


def _read(root: Path, web: Path) -> WebTools:
    try:
        meta = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{root / 'package.json'}: unreadable ({exc}); {HOW_TO_GET}") from None
    if meta.get("name") != PACKAGE:
        raise UserError(f"{root}: package.json names {meta.get('name')!r}, not {PACKAGE}; {HOW_TO_GET}")
    files = {p.name: p.read_bytes() for p in sorted(web.iterdir()) if p.is_file() and p.suffix == ".js"}
    return WebTools(root=root, version=str(meta.get("version", "")), npm_integrity=_npm_integrity(root),
                    files=files)


def _npm_integrity(root: Path) -> str | None:
    """The tarball integrity npm recorded when it installed the package (``node_modules/.package-lock.json``)."""
    lock = root.parent / ".package-lock.json"
    try:
        data = json.loads(lock.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = data.get("packages", {}).get(f"node_modules/{PACKAGE}", {})
    value = entry.get("integrity")
    return str(value) if value else None


@dataclass(frozen=True)
class InstallBehaviour:
    """What pressing Install with this manifest does to a xiaozhi board's flash."""

    asks_before_erasing: bool
    parts: tuple[tuple[str, int], ...]  # (path relative to the manifest, flash offset)

    @property
    def erases_without_asking(self) -> bool:
        """True when the installer wipes the whole chip (settings included) with no question."""
        return not self.asks_before_erasing


def install_behaviour(manifest: dict[str, Any]) -> InstallBehaviour:
    """Read a manifest the way the installer does (``util/manifest.ts`` maps the deprecated skip flag)."""
    asks = bool(manifest.get("new_install_prompt_erase")) or bool(manifest.get("new_install_skip_erase"))
    parts = tuple((str(p.get("path", "")), int(p.get("offset", 0))) for b in manifest.get("builds", [])
                  if isinstance(b, dict) for p in b.get("parts", []) if isinstance(p, dict))
    return InstallBehaviour(asks, parts)
