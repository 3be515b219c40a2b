"""Deterministic YAML writing for board files (block style, UTF-8, fixed key order, modeline)."""

from __future__ import annotations

from typing import Any

import yaml

SCHEMA_FILE = "board.schema.json"


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str)


def dump_yaml(data: Any, modeline_schema: str | None = None) -> str:
    """Serialise ``data`` (dict order kept); with a schema path, start with the yaml-language-server modeline."""
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=4096,
                     default_flow_style=False, indent=2)
    if modeline_schema:
        text = f"# yaml-language-server: $schema={modeline_schema}\n" + text
    return text


def schema_ref(board_dir: str) -> str:
    """Relative path from a board file to ``boards/board.schema.json``."""
    return "../" * board_dir.count("/") + SCHEMA_FILE
