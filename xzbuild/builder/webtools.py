"""ESP Web Tools manifests (factory install and update) and their JSON Schema.

The schema follows the ``Manifest``/``Build`` interfaces of esp-web-tools 10.4.0 (``dist/const.d.ts``):
``name``, ``version``, optional install flags, and ``builds[]`` of ``{chipFamily, parts[{path, offset}],
serialType?}`` where ``chipFamily`` is esptool-js's ``CHIP_NAME`` of the detected chip.

What the installer does with them (esp-web-tools 10.4.0, ``dist/install-dialog.js`` and ``dist/flash.js``;
``tests/builder/test_webtools.py`` reads these lines from the installed package):

- ``new_install_improv_wait_time: 0`` skips Improv Serial (``_client = null``), so the dashboard is the
  no-Improv one: "Install" erases the whole chip (``_startInstall(true)``) unless ``new_install_prompt_erase``
  is true, which asks first with an *unticked* "Erase device" box.
- ``flash()`` erases the whole chip (``esploader.eraseFlash()``) only when asked, then writes the parts.
- A build is picked by ``chipFamily`` (and ``serialType``) only: nothing checks the chip *revision*.

So the factory manifest always erases and writes the merged image; the update manifest asks (unticked: NVS
is kept) and writes every image except NVS — bootloader, partition table, blank otadata, app, assets — so the
device boots whichever way the box is set. ESP32-P4 (revision < v3.0) and ESP32-P4X (v3.x) builds share the
chip family ``ESP32-P4``; their manifests carry the revision range in the name, and the bootloader of a build
for the other revision refuses to start the app.
"""

from __future__ import annotations

import functools
from typing import Any

# esptool target name → ESP Web Tools chipFamily. Chips missing here (esp32s31) have no web installer.
CHIP_FAMILIES = {
    "esp32": "ESP32", "esp32s2": "ESP32-S2", "esp32s3": "ESP32-S3", "esp32c2": "ESP32-C2",
    "esp32c3": "ESP32-C3", "esp32c5": "ESP32-C5", "esp32c6": "ESP32-C6", "esp32c61": "ESP32-C61",
    "esp32h2": "ESP32-H2", "esp32p4": "ESP32-P4", "esp8266": "ESP8266",
}  # fmt: skip

MANIFEST_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ESP Web Tools manifest",
    "type": "object",
    "required": ["name", "version", "builds"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "version": {"type": "string", "minLength": 1},
        "home_assistant_domain": {"type": "string"},
        "funding_url": {"type": "string"},
        "new_install_skip_erase": {"type": "boolean"},
        "new_install_prompt_erase": {"type": "boolean"},
        "new_install_improv_wait_time": {"type": "number", "minimum": 0},
        "builds": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["chipFamily", "parts"],
                "additionalProperties": False,
                "properties": {
                    "chipFamily": {"enum": sorted(set(CHIP_FAMILIES.values()))},
                    "serialType": {"enum": ["cdc", "uart"]},
                    "parts": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["path", "offset"],
                            "additionalProperties": False,
                            "properties": {
                                "path": {"type": "string", "minLength": 1},
                                "offset": {"type": "integer", "minimum": 0},
                            },
                        },
                    },
                },
            },
        },
    },
}


def revision_label(target: str, min_rev: str, max_rev: str) -> str:
    """How a person tells builds of one chip family apart: ESP32-P4 (rev < v3.0) vs ESP32-P4X (rev v3.x)."""
    if target != "esp32p4":
        return ""
    major = int(min_rev.lstrip("v").split(".")[0])
    chip = "ESP32-P4X" if major >= 3 else "ESP32-P4"
    return f" for {chip} (chip revision {min_rev} to {max_rev})"


def factory_manifest(name: str, version: str, target: str, merged: str) -> dict[str, Any]:
    """Factory install: the whole chip is erased, then the merged image is written at 0 (NVS is wiped)."""
    return {
        "name": name,
        "version": version,
        "new_install_prompt_erase": False,  # without Improv: always erase (install-dialog.js, no-Improv path)
        "new_install_improv_wait_time": 0,  # xiaozhi provisions Wi-Fi itself, not over Improv
        "builds": [{"chipFamily": CHIP_FAMILIES[target], "parts": [{"path": merged, "offset": 0}]}],
    }


def update_manifest(name: str, version: str, target: str, parts: list[tuple[str, int]]) -> dict[str, Any]:
    """Update: asks before erasing (unticked by default: NVS kept); ``parts`` must be everything but NVS."""
    return {
        "name": name,
        "version": version,
        "new_install_prompt_erase": True,
        "new_install_improv_wait_time": 0,
        "builds": [{"chipFamily": CHIP_FAMILIES[target],
                    "parts": [{"path": path, "offset": offset} for path, offset in parts]}],
    }


@functools.cache
def _validator() -> Any:
    """One compiled validator (checking the schema itself costs more than validating a manifest)."""
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(MANIFEST_SCHEMA)
    return Draft202012Validator(MANIFEST_SCHEMA)


def validate_manifest(manifest: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` when the manifest is not ESP Web Tools-shaped."""
    _validator().validate(manifest)
