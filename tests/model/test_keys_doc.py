"""The declarations fill real fields, and docs/board-model.md's key table is theirs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from xzbuild.model import types
from xzbuild.model.keys import SECTIONS, key_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "board-model.md"
BEGIN, END = "<!-- key table: generated from xzbuild/model/keys.py -->\n", "<!-- end of key table -->"


def test_docs_key_table_is_the_declarations() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert shown == key_table(), ("docs/board-model.md's key table is stale; paste the output of "
                                  "python -c 'from xzbuild.model.keys import key_table; print(key_table(), end=\"\")'")


def test_each_key_fills_a_field_of_the_typed_model() -> None:
    for section in SECTIONS:
        for key in section.keys:
            cls_name, _, name = key.fills.partition(".")
            cls = getattr(types, cls_name)
            assert name in {f.name for f in dataclasses.fields(cls)}, (section.name, key.name, key.fills)


def test_the_loader_fills_the_declared_defaults(tmp_path: Path) -> None:
    """A board file with only its required keys gets each declared default in the field the key names."""
    from xzbuild.core.yamlmarks import load_marked
    from xzbuild.model.boardfile import board_from_doc
    from xzbuild.model.keys import BOARD, KCONFIG, SOURCE_FACTS, VARIANT

    text = ("type: demo\ntarget: esp32s3\nsource_facts: {}\n"
            "kconfig:\n- {symbol: BOARD_TYPE_DEMO, label: Demo, target: esp32s3}\nvariants:\n- name: demo\n")
    board, ck = board_from_doc(load_marked(tmp_path / "demo.yaml", text=text), "demo")
    assert board is not None and not ck.errors
    objects = {"Board": board, "SourceFacts": board.source_facts, "KconfigEntry": board.kconfig[0],
               "Variant": board.variants[0]}
    for section in (BOARD, SOURCE_FACTS, KCONFIG, VARIANT):
        for key in section.keys:
            cls_name, _, name = key.fills.partition(".")
            if key.required or key.name in ("kconfig", "variants", "source_facts"):
                continue  # set in the file above
            if key.name in ("sdkconfig", "sdkconfig_unprefixed", "p4x", "idf_version", "dir"):
                continue  # expanded by the loader (append lines, the P4X twin, SpecifierSet, the file's dir)
            assert getattr(objects[cls_name], name) == key.default, key.name


def test_string_kinds_table_names_each_key_of_the_kind() -> None:
    """docs/board-model.md's "String kinds" table lists, for each kind of xzbuild.core.sinks, the keys of that
    kind; every declared key whose kind is a sink is in its kind's row."""
    import re

    from xzbuild.core.sinks import KINDS

    text = DOC.read_text(encoding="utf-8").split("### String kinds", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in text.splitlines() if line.startswith("| `")]
    missing = []
    for section in SECTIONS:
        for key in section.keys:
            sink = key.kind.name.removeprefix("list of ")
            if sink not in KINDS:
                continue
            row = next((fields for kinds, fields in rows if f"`{sink}`" in kinds), None)
            if row is None or not re.search(rf"`[^`]*\b{key.name}`", row):
                missing.append(f"{sink}: {section.name}.{key.name}")
    assert not missing, missing
