"""ESP Web Tools manifests (factory install and update) and their JSON Schema.

The schema follows the ``Manifest``/``Build`` interfaces of esphome/esp-web-tools (``src/const.ts``):
``name``, ``version``, optional install flags, and ``builds[]`` of ``{chipFamily, parts[{path, offset}]}``
where ``chipFamily`` is one of the chip names the installer detects.
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
                    "chipVariant": {"type": "string"},
                    "improv": {"type": "boolean"},
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


def factory_manifest(name: str, version: str, target: str, merged: str) -> dict[str, Any]:
    """Factory install: the merged image at 0 after an erase prompt (wipes NVS and everything else)."""
    return {
        "name": name,
        "version": version,
        "new_install_prompt_erase": True,
        "new_install_improv_wait_time": 0,  # xiaozhi provisions Wi-Fi itself, not over Improv
        "builds": [{"chipFamily": CHIP_FAMILIES[target], "parts": [{"path": merged, "offset": 0}]}],
    }


def update_manifest(name: str, version: str, target: str, parts: list[tuple[str, int]]) -> dict[str, Any]:
    """Update: only the given images at their partition offsets, no erase, so NVS (settings) survives."""
    return {
        "name": name,
        "version": version,
        "new_install_prompt_erase": False,
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
