"""What the board pages' "Which firmware is mine?" check needs: esptool-js's browser bundle (served by the site
itself, like ESP Web Tools) and ``apps.json``, the ELF SHA-256 of every released app (from its
``esp_app_desc_t``), so a page can name the variant a connected board runs.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from xzbuild.core.errors import UserError

if TYPE_CHECKING:
    from xzbuild.release.inputs import Release
    from xzbuild.release.webinstall import WebTools

PACKAGE = "esptool-js"
PINNED_VERSION = "0.6.1"  # the line ESP Web Tools 10.4.0 bundles (its dependency: ^0.6.0); Makefile pins it
BUNDLE = "bundle.js"
APP_DESC_MAGIC = 0xABCD5432


def find_esptool_js(web: WebTools) -> tuple[str, bytes]:
    """(version, bundle.js) of the esptool-js next to (or inside) the located esp-web-tools package."""
    for root in (web.root / "node_modules" / PACKAGE, web.root.parent / PACKAGE):
        try:
            meta = json.loads((root / "package.json").read_text(encoding="utf-8"))
            return str(meta.get("version", "")), (root / BUNDLE).read_bytes()
        except (OSError, ValueError):
            continue
    raise UserError(f"{PACKAGE} not found next to {web.root}; install it with `npm install --prefix .venv/npm "
                    f"{PACKAGE}@{PINNED_VERSION}` (`make install` does)")


def app_elf_sha256(image: bytes) -> str | None:
    """``app_elf_sha256`` of an app image's descriptor (file offset 0xB0), or None when there is none."""
    if len(image) < 0xD0 or image[0] != 0xE9 or int.from_bytes(image[0x20:0x24], "little") != APP_DESC_MAGIC:
        return None
    return image[0xB0:0xD0].hex()


def apps_index(release: Release, pages: dict[str, str]) -> dict[str, dict[str, Any]]:
    """ELF SHA-256 → {variant, version, page} for every released app (``pages``: variant → board page)."""
    out: dict[str, dict[str, Any]] = {}
    for variant in release.variants:
        app = next((f for f in variant.files if f.role == "app"), None)
        if app is None:
            continue
        try:
            with (release.dist / app.path).open("rb") as fh:
                sha = app_elf_sha256(fh.read(0xD0))
        except OSError:
            continue
        if sha is not None:
            out[sha] = {"variant": variant.full_name, "version": variant.get("app_version"),
                        "page": pages.get(variant.full_name)}
    return out


def _rev(text: object) -> str:
    """``v3.99`` → ``399`` (major·100 + minor, as esptool reports revisions); empty when unknown."""
    if not isinstance(text, str) or not text.startswith("v") or "." not in text:
        return ""
    major, _, minor = text[1:].partition(".")
    return str(int(major) * 100 + int(minor)) if major.isdigit() and minor.isdigit() else ""


def chip_check_facts(variant: Any) -> dict[str, str]:
    """The ``data-*`` facts a board page's chip check compares with the connected chip: esptool-js's chip name
    (what ESP Web Tools matches ``chipFamily`` with), the accepted revision range, the flash size, the version."""
    from xzbuild.builder.webtools import CHIP_FAMILIES

    revision = variant.get("chip_revision") or {}
    flash = (variant.get("flash_settings") or {}).get("flash_size") or ""
    return {"family": CHIP_FAMILIES.get(str(variant.get("target", "")), ""),
            "rev-min": _rev(revision.get("min")), "rev-max": _rev(revision.get("max")),
            "flash": str(flash), "version": str(variant.get("app_version") or "")}


def nvs_facts(release: Release, variant: Any) -> dict[str, str]:
    """``nvs-offset``/``nvs-size`` of the partition the firmware opens (label ``nvs``), from the released partition
    table; empty when the release has no readable table (the page then offers no own-server install)."""
    from xzbuild.partitions import parse_binary
    from xzbuild.provision import nvs_partition

    table = next((f for f in variant.files if f.role == "partition-table"), None)
    if table is None:
        return {}
    try:
        part = nvs_partition(parse_binary((release.dist / table.path).read_bytes(), table.path))
    except (OSError, UserError):
        return {}
    out = {"nvs-offset": str(part.offset), "nvs-size": str(part.size)}
    assets = next((f for f in variant.files if f.role == "assets" and isinstance(f.offset, int)), None)
    if assets is not None:  # "assets over Wi-Fi" leaves this part out and names it in NVS assets/download_url
        out |= {"assets-offset": str(assets.offset), "assets-size": str(assets.size or 0)}
    return out
