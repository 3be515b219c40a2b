"""Kconfig symbol names the parser cannot read (found by the long string property: sdkconfig key `if`).

The judge is esp-idf-kconfig's own parser: every word of kconfiglib's keyword table (its docs' "Kconfig
language" keywords plus the legacy ones) is offered as `config WORD`; a word the parser refuses must be refused
by the symbol sinks and their schema patterns, and a word it accepts must be accepted by both.
"""

from __future__ import annotations

import re
from pathlib import Path

import esp_kconfiglib
import pytest
from esp_kconfiglib.core import KconfigError

from xzbuild.core.sinks import problem, schema_pattern

CANDIDATES = ["allnoconfig_y", "bool", "boolean", "choice", "comment", "config", "def_bool", "def_hex", "def_int",
              "def_string", "def_tristate", "default", "defconfig_list", "depends", "endchoice", "endif", "endmenu",
              "env", "grsource", "gsource", "help", "hex", "if", "imply", "int", "mainmenu", "menu", "menuconfig",
              "modules", "on", "option", "optional", "orsource", "osource", "prompt", "range", "rsource", "select",
              "source", "string", "tristate", "visible", "warning", "m", "IF", "ifx", "FOO_BAR"]


def _parser_accepts(word: str, tmp: Path) -> bool:
    kconfig = tmp / "Kconfig"
    kconfig.write_text(f'mainmenu "t"\nconfig {word}\n    bool "k"\n', encoding="utf-8")
    try:
        return word in esp_kconfiglib.Kconfig(str(kconfig), warn=False).syms
    except KconfigError:
        return False


@pytest.mark.parametrize("kind", ["kconfig_symbol", "sdkconfig_key"])
def test_symbol_sinks_refuse_exactly_what_the_parser_cannot_read(kind: str, tmp_path: Path) -> None:
    pattern = re.compile(schema_pattern(kind) or "")
    disagree = []
    for word in CANDIDATES:
        reference = _parser_accepts(word, tmp_path)
        ours = problem(kind, word) is None
        schema = pattern.search(word) is not None
        if not reference == ours == schema:
            disagree.append(f"{word}: parser {reference}, sink {ours}, schema {schema}")
    assert not disagree, disagree
