"""Turn one board YAML document into a typed Board (per-file checks; cross-file rules live in validate)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from xzbuild.core.check import Checker, describe
from xzbuild.core.yamlmarks import MarkedDoc, join
from xzbuild.model.keys import BOARD, HARDWARE_KEYS, KCONFIG, P4X, SOURCE_FACTS, VARIANT
from xzbuild.model.naming import board_file_key
from xzbuild.model.types import P4_REV_LESS_V3_LINES, Board, KconfigEntry, SourceFacts, Variant

if TYPE_CHECKING:
    from xzbuild.parts.items import Item

__all__ = ["HARDWARE_KEYS", "board_dir_for", "board_from_doc"]


def board_from_doc(doc: MarkedDoc, board_dir: str) -> tuple[Board | None, Checker]:
    """Build the Board for ``doc``; returns (None, checker) when the file is unusable."""
    ck = Checker(doc)
    data = BOARD.read(ck, doc.data, "")
    if data is None:
        return None, ck
    board = Board(dir=board_dir, path=doc.path, doc=doc, **BOARD.fields(data),
                  hardware_loaded=not any(key in HARDWARE_KEYS for key in doc.skipped))
    for part in board_dir.split("/"):  # the dir names a firmware directory and a CMake string
        ck.sink_ok(part, "", "dir_name")
    if "dir" in data:
        # The firmware dir when its name is no board file name (capitals: ``EnglishTeacher``): the file is
        # ``<board_file_key(dir)>.yaml``, so one dir has one file and the matrix finds it by path.
        fw_dir = ck.typed(data["dir"], "dir", str)
        if fw_dir is not None and all(ck.sink_ok(p, "dir", "firmware_dir") for p in fw_dir.split("/")):
            if board_file_key(fw_dir) != board_dir:
                ck.error("dir", f"{describe(fw_dir)} is kept in boards/{board_file_key(fw_dir)}.yaml, not in "
                                f"boards/{board_dir}.yaml; rename the file or fix dir")
            elif fw_dir == board_dir:
                ck.error("dir", f"{describe(fw_dir)} is this file's own name; drop the key")
            else:
                board.dir = fw_dir
    if "source_facts" in data:
        facts = SOURCE_FACTS.read(ck, data["source_facts"], "source_facts")
        if facts is not None:
            board.source_facts = SourceFacts(**SOURCE_FACTS.fields(facts))
    for i, raw in enumerate(_list(ck, data.get("kconfig", []), "kconfig")):
        entry = KCONFIG.read(ck, raw, join("kconfig", i), empty_stops=True)
        if entry is not None:
            board.kconfig.append(KconfigEntry(**KCONFIG.fields(entry)))
    if "hardware" in data:
        from xzbuild.parts import check_hardware

        board.hardware = check_hardware(ck, data["hardware"], "hardware")
    if "config_h" in data:
        board.config_h = _items(ck, data["config_h"], "config_h")
        _check_field_slots(ck, board)
    for i, raw in enumerate(_list(ck, data.get("variants", []), "variants")):
        board.variants.extend(_variants(ck, board, raw, join("variants", i)))
    for index, variant in enumerate(board.variants):
        variant.index = index
    return board, ck


def _list(ck: Checker, value: Any, path: str) -> list[Any]:
    if isinstance(value, list):
        return value
    ck.error(path, f"expected a list, got {describe(value)}")
    return []


def _variants(ck: Checker, board: Board, raw: Any, path: str) -> list[Variant]:
    data = VARIANT.read(ck, raw, path, empty_stops=True)
    if data is None:
        return []
    spec, spec_text = data["idf_version"] or (None, None)
    options = data["build_options"]
    has_append = "sdkconfig" in raw or "sdkconfig_unprefixed" in raw
    lines = data["sdkconfig"] + data["sdkconfig_unprefixed"]
    base = Variant(board=board, kconfig=None, name=data["name"], target=board.target, index=0,
                   legacy_names=data["legacy_names"], idf_version=spec, idf_version_text=spec_text,
                   sdkconfig_append=lines, has_sdkconfig_append=has_append, build_options=dict(options),
                   path_key=path)
    if "p4x" not in data:
        return [base]
    if board.target and board.target != "esp32p4":
        ck.error(join(path, "p4x"), f"a P4/P4X pair needs target esp32p4, the board targets {board.target}")
    base.chip_variant = "p4"
    base.sdkconfig_append = lines + list(P4_REV_LESS_V3_LINES)
    pair = P4X.read(ck, data["p4x"], join(path, "p4x"))
    if pair is None:
        return [base]
    x_spec, x_text = (pair["idf_version"] or (None, None)) if "idf_version" in data["p4x"] else (spec, spec_text)
    twin = Variant(board=board, kconfig=None, name=pair["name"], target=board.target, index=0,
                   legacy_names=pair["legacy_names"], idf_version=x_spec, idf_version_text=x_text,
                   sdkconfig_append=list(lines), has_sdkconfig_append=has_append, build_options=dict(options),
                   chip_variant="p4x", path_key=join(path, "p4x"))
    return [base, twin]


def _check_field_slots(ck: Checker, board: Board) -> None:
    """Each ``part.field`` a ``hardware: [...]`` slot names is set in ``hardware`` and named only once."""
    from xzbuild.parts import named_fields

    seen: set[str] = set()
    for path in named_fields(board.config_h):
        part, _, name = path.partition(".")
        if path in seen:
            ck.error("config_h", f"hardware field {path} is placed twice; keep one 'hardware' entry for it")
        elif name not in board.hardware.get(part, {}):
            ck.error("config_h", f"a hardware slot names {path} but hardware.{part}.{name} is not set; set it or "
                                 "drop it from the slot")
        seen.add(path)


def _items(ck: Checker, raw: Any, path: str) -> list[Item]:
    """The config.h item tree as stored in YAML (``define``/``include``/``raw``/``branches``/``hardware``)."""
    from xzbuild.parts.items import Conditional, Define, HardwareSlot, Include, Raw

    out: list[Item] = []
    for i, item in enumerate(_list(ck, raw, path)):
        sub = join(path, i)
        if item == "hardware":
            out.append(HardwareSlot(None))
            continue
        if not isinstance(item, dict) or len(item) == 0:
            ck.error(sub, f"expected a config.h item (define/include/raw/branches/hardware), got {describe(item)}")
            continue
        kind = next(iter(item))
        if kind == "define":
            data = ck.mapping(item, sub, ["define", "value", "comment", "params"])
            name = ck.text(data.get("define"), join(sub, "define"), "c_macro")
            value = data.get("value", "")
            if isinstance(value, (int, bool)) and not isinstance(value, bool):
                value = str(value)
            value = ck.text(value, join(sub, "value"), "c_expr") or ""
            comment = ck.text(data.get("comment"), join(sub, "comment"), "c_comment", optional=True)
            params = ck.text(data.get("params"), join(sub, "params"), "c_params", optional=True)
            if name:
                out.append(Define(name, value, comment, params))
        elif kind in ("include", "raw"):
            ck.mapping(item, sub, [kind])
            text = ck.text(item[kind], join(sub, kind), "c_include" if kind == "include" else "c_raw")
            if text is not None:
                out.append(Include(text) if kind == "include" else Raw(text))
        elif kind == "branches":
            ck.mapping(item, sub, ["branches", "end", "indent"])
            end = ck.text(item.get("end"), join(sub, "end"), "c_endif_tail", optional=True)
            indent = ck.typed(item.get("indent", 0), join(sub, "indent"), int) or 0
            if indent < 0:
                ck.error(join(sub, "indent"), f"expected a number of spaces (0 or more), got {indent}")
                indent = 0
            if item["branches"] == []:
                ck.error(join(sub, "branches"), "expected at least one branch (when: if ...); drop the empty item")
            branches: list[tuple[str | None, list[Item]]] = []
            for j, branch in enumerate(_list(ck, item["branches"], join(sub, "branches"))):
                bpath = join(join(sub, "branches"), j)
                bdata = ck.mapping(branch, bpath, ["when", "items"], required=["when"])
                when = ck.typed(bdata.get("when"), join(bpath, "when"), str)
                if when is None:
                    continue
                first = j == 0
                word = when.split(" ", 1)[0]
                if (first and word not in ("if", "ifdef", "ifndef")) or (not first and word not in ("elif", "else")):
                    expect = "if/ifdef/ifndef" if first else "elif/else"
                    ck.error(join(bpath, "when"), f"expected a condition starting with {expect}, got {describe(when)}")
                    continue
                if not ck.sink_ok(when, join(bpath, "when"), "c_condition"):
                    continue
                branches.append((None if when == "else" else when, _items(ck, bdata.get("items", []), join(bpath, "items"))))
            if branches:
                out.append(Conditional(branches, end=end, indent=indent))
        elif kind == "hardware" and isinstance(item.get("hardware"), list):
            ck.mapping(item, sub, ["hardware"])
            out.append(HardwareSlot(None, fields=tuple(_field_paths(ck, item["hardware"], join(sub, "hardware")))))
        elif kind == "hardware":
            from xzbuild.parts import check_hardware

            ck.mapping(item, sub, ["hardware"])
            out.append(HardwareSlot(check_hardware(ck, item["hardware"], join(sub, "hardware"))))
        else:
            ck.error(sub, f"unknown config.h item '{kind}'; use define, include, raw, branches or hardware", key=True)
    return out


def _field_paths(ck: Checker, raw: list[Any], path: str) -> list[str]:
    """``[audio.input_sample_rate, ...]``: top-level hardware fields emitted at this place, in this order."""
    from xzbuild.parts import PARTS

    out = []
    for i, text in enumerate(raw):
        part, _, name = str(text).partition(".")
        if not isinstance(text, str) or part not in PARTS or PARTS[part].field(name) is None:
            ck.error(join(path, i), f"{describe(text)} is not a hardware field; write <part>.<field>, e.g. "
                                    "audio.input_sample_rate")
        else:
            out.append(text)
    return out


def board_dir_for(root: Path, path: Path) -> str:
    """``boards/waveshare/esp32-p4-nano.yaml`` → ``waveshare/esp32-p4-nano``."""
    rel = path.relative_to(root).as_posix()
    return rel[: -len(".yaml")] if rel.endswith(".yaml") else rel
