"""The one sdkconfig reader/writer (``xzbuild.core.sdkconfig_text``) against esp-idf-kconfig's own loader and
writer (``esp_kconfiglib``): every expected value here is what the reference makes of the same text.

- upstream's real files at the pin: every ``sdkconfig.defaults*`` of the tree, the board sdkconfig files under
  ``main/boards`` and every build's ``sdkconfig_append`` of the boards' ``config.json`` (the fragments
  ``scripts/build.py`` layers on top), loaded into upstream's ``main/Kconfig.projbuild``: a symbol that
  Kconfig declares is compared by the value the loader gives it, every other one by the raw value the loader
  records for an undefined symbol (``Kconfig.missing_syms``); likewise the defaults fragment of every variant
  of the repository's board files;
- a text with each corner of the format (``is not set``, escapes, inline comments, indented and malformed
  lines, a later assignment winning) against a Kconfig that declares each type;
- the writer: its text re-read by the reference gives back every value, and each line equals the line
  esp-idf-kconfig writes for the symbol (``Symbol.config_string``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from xzbuild.core import sdkconfig_text
from xzbuild.core.errors import UserError

esp_kconfiglib = pytest.importorskip("esp_kconfiglib")
from esp_kconfiglib import core as kcore  # noqa: E402

DEFAULT_PRAGMA = "# default:\n"  # esp-idf-kconfig marks a value that is its default this way; not a value


def reference(kconfig: Path) -> Any:
    """esp-idf-kconfig's Kconfig object for ``kconfig``, warnings off (the loader's verdicts are read directly)."""
    return esp_kconfiglib.Kconfig(str(kconfig), warn=False)


def reference_values(kconf: Any, config: Path) -> dict[str, str]:
    """What esp-idf-kconfig's loader takes from ``config``: a declared symbol's loaded value (bools as y/n,
    strings unescaped), an undeclared one's raw value as the loader records it; the later assignment wins."""
    kconf.missing_syms = []
    kconf.load_config(str(config), replace=True)
    out: dict[str, str] = {}
    for name, raw in kconf.missing_syms:
        out[name] = raw
    for name, sym in kconf.syms.items():
        if not sym.nodes:
            continue
        value = sym._user_value  # set by load_config; None where the file does not assign the symbol
        if sym.choice is not None and sym.choice._user_selection is sym:
            value = 2
        if value is None:
            continue
        out[name] = {0: "n", 2: "y"}[value] if sym.orig_type == kcore.BOOL else str(value)
    return out


def reader_values(kconf: Any, config: Path) -> dict[str, str]:
    """The same, from the reader under test: declared bools by their first character, as the loader reads
    them; declared strings unescaped; everything else as written."""
    out: dict[str, str] = {}
    for a in sdkconfig_text.read_file(config):
        sym = kconf.syms.get(a.name)
        if sym is not None and sym.nodes and sym.orig_type == kcore.BOOL:
            out[a.name] = a.raw[0]
        elif sym is not None and sym.nodes and sym.orig_type == kcore.STRING:
            out[a.name] = a.value
        else:
            out[a.name] = a.raw
    return out


def upstream_files(upstream: Path, tmp: Path) -> Iterator[Path]:
    """Upstream's sdkconfig texts: defaults files, board sdkconfig files, each build's append as a fragment."""
    yield from sorted(p for p in upstream.rglob("sdkconfig.defaults*") if ".git" not in p.parts)
    boards = upstream / "main" / "boards"
    yield from sorted(p for p in boards.rglob("sdkconfig*") if p.is_file())
    for config in sorted(boards.rglob("config.json")):
        for build in json.loads(config.read_text(encoding="utf-8")).get("builds", []):
            fragment = tmp / f"{config.parent.name}-{build['name']}.fragment"
            fragment.write_text("\n".join(build.get("sdkconfig_append", [])) + "\n", encoding="utf-8")
            yield fragment


def test_upstream_files_read_as_esp_idf_reads_them(upstream: Path, tmp_path: Path) -> None:
    kconf = reference(upstream / "main" / "Kconfig.projbuild")
    files = list(upstream_files(upstream, tmp_path))
    declared = 0
    assert len(files) > 100  # 10 defaults/board files and the builds of ~146 boards at the pin
    for path in files:
        expected = reference_values(kconf, path)
        assert reader_values(kconf, path) == expected, path
        declared += sum(1 for name in expected if kconf.syms.get(name) is not None and kconf.syms[name].nodes)
    assert declared > 100  # board symbols, display and wake-word choices: the typed path is exercised


def test_our_board_fragments_read_as_esp_idf_reads_them(upstream: Path, repo_root: Path, tmp_path: Path) -> None:
    """The defaults fragment each variant of the repository's board files gets (``Fragment.text``, what
    ``matrix build`` hands idf.py), read by the reader and by the loader."""
    from xzbuild.model import load_boards
    from xzbuild.sdkconfig.fragment import variant_fragment

    board_set = load_boards(repo_root / "boards")
    kconf = reference(upstream / "main" / "Kconfig.projbuild")
    variants = [v for v in board_set.variants() if v.kconfig is not None]
    assert len(variants) > 100
    for v in variants:
        path = tmp_path / f"{v.full_name}.fragment"
        path.write_text(variant_fragment(v, board_set.firmware).text(), encoding="utf-8")
        assert reader_values(kconf, path) == reference_values(kconf, path), v.full_name


def test_upstream_symbols_written_as_esp_idf_writes_them(upstream: Path) -> None:
    kconf = reference(upstream / "main" / "Kconfig.projbuild")
    kconf.load_config(str(upstream / "sdkconfig.defaults.esp32s3"), replace=True)
    kinds = {kcore.BOOL: "bool", kcore.STRING: "string", kcore.INT: "int", kcore.HEX: "hex"}
    compared = 0
    for name, sym in kconf.syms.items():
        written = sym.config_string.replace(DEFAULT_PRAGMA, "") if sym.nodes else ""
        if written:
            assert sdkconfig_text.format_line(name, sym.str_value, kinds[sym.orig_type]) + "\n" == written
            compared += 1
    assert compared > 50


KCONFIG = """\
config B1
    bool "b1"
config B2
    bool "b2"
    default y
config B3
    bool "b3"
config B4
    bool "b4"
config B5
    bool "b5"
config S1
    string "s1"
config S2
    string "s2"
config S3
    string "s3"
config S4
    string "s4"
config S5
    string "s5"
config I1
    int "i1"
config I2
    int "i2"
config H1
    hex "h1"
"""

CORNERS = """\
# A comment, then a blank line

CONFIG_B1=y
# CONFIG_B2 is not set
CONFIG_B3=n
CONFIG_B4=y
CONFIG_S1="plain"
CONFIG_S2="a \\"quote\\" and a back\\\\slash"
CONFIG_S3="hash # inside"\x20\x20
CONFIG_S4="\\q is just q"
CONFIG_I1=42
CONFIG_I2=-7   # an inline comment
CONFIG_H1=0x1F
CONFIG_B4=n
  CONFIG_B5=y
CONFIG_UNDECLARED="x # y"
CONFIG_UNDECLARED_NUM=12 # note
# CONFIG_UNDECLARED_OFF is not set
this line is neither
CONFIG_S5=""
"""


def test_format_corners_read_as_esp_idf_reads_them(tmp_path: Path) -> None:
    (tmp_path / "Kconfig").write_text(KCONFIG, encoding="utf-8")
    config = tmp_path / "sdkconfig"
    config.write_text(CORNERS, encoding="utf-8")
    kconf = reference(tmp_path / "Kconfig")
    expected = reference_values(kconf, config)
    assert "B5" not in expected and expected["B4"] == "n"  # the reference's rules this text is about
    assert expected["S2"] == 'a "quote" and a back\\slash' and expected["I2"] == "-7"
    assert reader_values(kconf, config) == expected


def test_line_numbers_and_strict_errors() -> None:
    lines = CORNERS.splitlines()
    found = {a.name: a for a in sdkconfig_text.read_lines(lines, "x/sdkconfig.defaults")}
    assert found["B2"].where == "x/sdkconfig.defaults:4" and found["B2"].unset and found["B2"].raw == "n"
    assert found["B4"].line == 14  # the later assignment is the one kept
    assert found["B4"].text == "CONFIG_B4=n" and found["B2"].text == "# CONFIG_B2 is not set"
    with pytest.raises(UserError, match=r"^x/sdkconfig.defaults:15: invalid sdkconfig line '  CONFIG_B5=y'"):
        sdkconfig_text.read_lines(lines, "x/sdkconfig.defaults", strict=True)


def test_deprecated_block_is_skipped_as_the_loader_skips_it(tmp_path: Path) -> None:
    (tmp_path / "Kconfig").write_text(KCONFIG, encoding="utf-8")
    config = tmp_path / "sdkconfig"
    config.write_text("CONFIG_B1=y\n# Deprecated options for backward compatibility\nCONFIG_B1=n\n"
                      "CONFIG_OLD_NAME=y\n# End of deprecated options\nCONFIG_I1=3\n", encoding="utf-8")
    kconf = reference(tmp_path / "Kconfig")
    assert reader_values(kconf, config) == reference_values(kconf, config) == {"B1": "y", "I1": "3"}


SYMBOLS = [("B1", "bool", "y"), ("B2", "bool", "n"), ("I1", "int", "-12"), ("I2", "int", "0"), ("H1", "hex", "0xdeadBEEF"),
           ("S1", "string", 'he said "hi" \\ left'), ("S2", "string", "# not a comment"), ("S3", "string", ""),
           ("S4", "string", "ünïcödé \\\\ two")]


def test_writer_round_trips_through_the_reference(tmp_path: Path) -> None:
    (tmp_path / "Kconfig").write_text(KCONFIG, encoding="utf-8")
    kconf = reference(tmp_path / "Kconfig")
    config = tmp_path / "sdkconfig"
    config.write_text(sdkconfig_text.write_text(SYMBOLS, header="Written by the test"), encoding="utf-8")
    kconf.load_config(str(config), replace=True)
    assert {name: kconf.syms[name].str_value for name, _, _ in SYMBOLS} == {n: v for n, _, v in SYMBOLS}
    # ... and each line is the one esp-idf-kconfig itself writes for the symbol with that value
    for name, kind, value in SYMBOLS:
        assert sdkconfig_text.format_line(name, value, kind) + "\n" == \
            kconf.syms[name].config_string.replace(DEFAULT_PRAGMA, "")
    # the reader gives the values back too
    read = {a.name: a.value for a in sdkconfig_text.read_file(config)}
    assert read == {n: v for n, _, v in SYMBOLS}


# ---- the product's readers that now go through it (each disagreed with the loader before) ----

def test_importer_layer_is_what_the_loader_records(tmp_path: Path) -> None:
    """``importer.sources.sdkconfig_layer`` (firmware facts from ``sdkconfig.defaults*``): ``is not set`` is n,
    an inline comment is not part of the value, an indented line is not an assignment."""
    from xzbuild.importer.sources import sdkconfig_layer

    (tmp_path / "Kconfig").write_text('mainmenu "nothing declared"\n', encoding="utf-8")
    defaults = tmp_path / "sdkconfig.defaults"
    defaults.write_text(CORNERS, encoding="utf-8")
    kconf = reference(tmp_path / "Kconfig")
    assert sdkconfig_layer(defaults) == reference_values(kconf, defaults)


def test_resolved_sdkconfig_strings_are_unescaped(tmp_path: Path) -> None:
    """``builder.identity.read_resolved`` reading a build's ``sdkconfig`` (no ``sdkconfig.json``): strings as
    the loader gives them, ``y`` true, ``is not set`` false."""
    from xzbuild.builder.identity import read_resolved

    (tmp_path / "Kconfig").write_text(KCONFIG, encoding="utf-8")
    (tmp_path / "sdkconfig").write_text(CORNERS, encoding="utf-8")
    kconf = reference(tmp_path / "Kconfig")
    expected = reference_values(kconf, tmp_path / "sdkconfig")
    resolved = read_resolved(tmp_path)
    for name in ("S1", "S2", "S3", "S4", "S5", "I1", "I2", "H1"):
        assert resolved[name] == expected[name], name
    assert resolved["B1"] is True and resolved["B2"] is False and "B5" not in resolved
