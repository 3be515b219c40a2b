"""Reading a board's upstream ``config.json``: shape checks with file:line:col, and line lookups for reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xzbuild.core.errors import Location, UserError


def json_line(path: Path, text: str) -> int:
    """1-based line of the first line holding ``"text"`` in a JSON file (1 when not found)."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if f'"{text}"' in line:
            return number
    return 1


def json_key_line(path: Path, key: str) -> int:
    """1-based line of the first ``"key":`` in a JSON file (1 when not found)."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if f'"{key}"' in line:
            return number
    return 1


def read_config_json(path: Path) -> dict[str, Any]:
    """A board's config.json, checked for the shape the importer relies on (UserError with file:line:col)."""
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON: {exc.msg}", Location(str(path), exc.lineno, exc.colno)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read config.json: {exc}", Location(str(path))) from None
    if not isinstance(cfg, dict):
        raise UserError("expected a JSON object", Location(str(path), 1, 1))
    # "type" is optional: before 2026-07-27 the board type was the directory name.
    if "type" in cfg and not isinstance(cfg["type"], str):
        raise UserError("'type' must be a string", Location(str(path), 1, 1))
    for key, kind in (("target", str), ("builds", list)):
        if not isinstance(cfg.get(key), kind):
            raise UserError(f"'{key}' is missing or has the wrong type", Location(str(path), 1, 1))
    if "manufacturer" in cfg and not isinstance(cfg["manufacturer"], str):
        raise UserError("'manufacturer' must be a string", Location(str(path), 1, 1))
    for i, build in enumerate(cfg["builds"]):
        if not isinstance(build, dict) or not isinstance(build.get("name"), str):
            raise UserError(f"builds[{i}] needs a string 'name'", Location(str(path), 1, 1))
        append = build.get("sdkconfig_append", [])
        if not isinstance(append, list) or not all(isinstance(x, str) and "=" in x for x in append):
            raise UserError(f"builds[{i}].sdkconfig_append must be a list of CONFIG_X=value strings",
                            Location(str(path), 1, 1))
    return cfg
