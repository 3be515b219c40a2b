"""``load_boards(root)``: read every board file and the firmware facts, resolve variants, validate."""

from __future__ import annotations

import os
import re
from pathlib import Path

from xzbuild.core import sdkconfig_text
from xzbuild.core.boardsdir import HOW
from xzbuild.core.errors import Location, UserError, UserErrors
from xzbuild.core.yamlmarks import load_marked
from xzbuild.model.boardfile import HARDWARE_KEYS, board_dir_for, board_from_doc
from xzbuild.model.firmware_facts import FIRMWARE_FILE, firmware_from_doc
from xzbuild.model.naming import resolve_symbol
from xzbuild.model.types import Board, BoardSet, FirmwareFacts, KconfigEntry, Variant

# Directories under boards/ that hold other data (partition tables belong to the partitions work).
SKIPPED_DIRS = {"partitions"}


def board_files(root: Path) -> list[Path]:
    """``<root>/*.yaml`` and ``<root>/<manufacturer>/*.yaml``, skipping ``_*`` files and data dirs."""
    files = [p for p in root.glob("*.yaml") if not p.name.startswith("_")]
    for sub in sorted(root.iterdir()) if root.is_dir() else []:
        if sub.is_dir() and not sub.name.startswith((".", "_")) and sub.name not in SKIPPED_DIRS:
            files.extend(p for p in sub.glob("*.yaml") if not p.name.startswith("_"))
    return sorted(files)


def _display(root: Path, path: Path, cwd: str | None = None) -> str:
    """``path`` relative to the working directory when inside it (as error messages show it)."""
    text = str(path)
    base = (cwd if cwd is not None else os.getcwd()).rstrip("/") + "/"
    return text[len(base):] if os.path.isabs(text) and text.startswith(base) else text


def load_boards(root: Path, validate: bool = True, hardware: bool = True) -> BoardSet:
    """Load and validate ``root`` (usually ``boards/``). Raises UserErrors listing every problem.

    ``hardware=False`` is the release matrix's fast path: each file's hardware, shared_gpios and config.h
    sections are syntax-checked (errors still name file:line:col) but not built or validated, so those
    fields stay empty (``Board.hardware_loaded`` is False). Everything the matrix reads is fully checked.
    """
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"board directory {root} not found; {HOW}")
    errors: list[UserError] = []
    fw_path = root / FIRMWARE_FILE
    firmware = FirmwareFacts()
    if fw_path.is_file():
        try:
            fw_doc = load_marked(fw_path, _display(root, fw_path))
            firmware, fck = firmware_from_doc(fw_doc)
            errors.extend(fck.errors)
        except UserError as exc:
            errors.append(exc)
    else:
        errors.append(UserError(f"missing {FIRMWARE_FILE} (firmware-global facts); run `xzbuild boards import`",
                                Location(_display(root, fw_path))))
    boards: list[Board] = []
    unreadable = 0
    cwd = os.getcwd()
    for path in board_files(root):
        try:
            doc = load_marked(path, _display(root, path, cwd), skip=() if hardware else HARDWARE_KEYS)
        except UserError as exc:
            errors.append(exc)
            unreadable += 1
            continue
        board, ck = board_from_doc(doc, board_dir_for(root, path))
        errors.extend(ck.errors)
        if board is not None:
            boards.append(board)
        else:
            unreadable += 1
    boards.sort(key=lambda b: b.dir)
    bs = BoardSet(root=root, boards=boards, firmware=firmware)
    _resolve(bs, errors)
    if validate:
        from xzbuild.model.hwrefs import reserved_pin_warnings
        from xzbuild.model.validate import validate_board_set

        errors.extend(validate_board_set(bs, complete=unreadable == 0))
        from xzbuild.model.sdkkeys import unknown_key_warnings

        bs.warnings.extend(w for b in boards for w in reserved_pin_warnings(b))
        bs.warnings.extend(unknown_key_warnings(bs))
    if errors:
        raise UserErrors(_sorted_errors(errors))
    return bs


def _sorted_errors(errors: list[UserError]) -> list[UserError]:
    def key(e: UserError) -> tuple[str, int, int, str]:
        loc = e.location
        return (loc.path, loc.line, loc.column, e.message) if loc else ("", 0, 0, e.message)

    for e in errors:
        # Values and keys from the file end up in messages; keep every error on one printable line.
        e.message = clean_message(e.message)
    unique = {str(e): e for e in errors}
    return sorted(unique.values(), key=key)


def clean_message(text: str) -> str:
    """Escape line breaks and control characters so an error stays one printable line."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


_BOARD_LINE = re.compile(r"^CONFIG_(BOARD_TYPE_[A-Za-z0-9_]+)=y$")


def _resolve(bs: BoardSet, errors: list[UserError]) -> None:
    """Attach each variant's Kconfig entry (upstream ``_resolve_board_config``) and effective sdkconfig."""
    known = {k.symbol for b in bs.boards for k in b.kconfig}
    entries: dict[str, KconfigEntry] = {}
    for b in bs.boards:
        for k in b.kconfig:
            entries.setdefault(k.symbol, k)  # the first board owning a symbol, as a linear search finds it
    layers: dict[str, tuple[dict[str, str], str | None]] = {}
    for board in bs.boards:
        candidates = [(k.symbol, k.target) for k in board.kconfig]
        for v in board.variants:
            explicit = [m.group(1) for line in v.sdkconfig_append if (m := _BOARD_LINE.match(line.strip()))]
            symbol, problem = resolve_symbol(v.name, v.target, explicit, candidates, known)
            if symbol is None:
                errors.append(UserError(f"{v.path_key}: {problem}", v.location()))
            else:
                v.kconfig = entries.get(symbol)
                if problem:
                    bs.warnings.append(f"{v.location()}: {v.name}: {problem}")
            if v.target not in layers:
                layers[v.target] = _defaults_layers(bs.firmware, v.target)
            _effective(layers[v.target], v)


_FLASH_SIZE = re.compile(r"CONFIG_ESPTOOLPY_FLASHSIZE_(\d+MB)")


def _layer(merged: dict[str, str], flash: str | None, pairs: list[tuple[str, str]]) -> str | None:
    """Apply ``pairs`` in order to ``merged``; the flash size the last ``FLASHSIZE_<n>MB=y`` selects."""
    for key, val in pairs:
        merged[key] = val
        if val == "y" and key.startswith("CONFIG_ESPTOOLPY_FLASHSIZE_") and (m := _FLASH_SIZE.fullmatch(key)):
            flash = m.group(1)
    return flash


def _defaults_layers(fw: FirmwareFacts, target: str) -> tuple[dict[str, str], str | None]:
    """sdkconfig.defaults then sdkconfig.defaults.<target> (shared by every variant of the target)."""
    merged: dict[str, str] = {}
    layers = fw.default_layers(target)
    flash = _layer(merged, None, [(f"CONFIG_{k}", val) for layer in layers for k, val in layer.items()])
    return merged, flash


# ESP-IDF's Kconfig defaults where no layer chooses: ESPTOOLPY_FLASHSIZE's default is 2MB, and
# PARTITION_TABLE_TYPE's is the single-app table (components/partition_table/partitions_singleapp.csv).
IDF_DEFAULT_FLASH_SIZE = "2MB"


def _partition_table(merged: dict[str, str]) -> str:
    """The table ESP-IDF's PARTITION_TABLE_TYPE choice selects: the custom file (``partitions.csv`` unless
    named) when ``PARTITION_TABLE_CUSTOM=y``, else one of ESP-IDF's built-in tables."""
    from xzbuild.partitions.refs import builtin_for

    if merged.get("CONFIG_PARTITION_TABLE_CUSTOM") == "y":
        return merged.get("CONFIG_PARTITION_TABLE_CUSTOM_FILENAME", '"partitions.csv"').strip('"')
    return builtin_for(merged)


def _effective(defaults: tuple[dict[str, str], str | None], v: Variant) -> None:
    """Layer the target's defaults and the append; derive flash size, partition table, PSRAM."""
    merged = dict(defaults[0])
    pairs = [(a.key, a.raw) for a in sdkconfig_text.read_lines(v.sdkconfig_append, v.path_key)]
    flash = _layer(merged, defaults[1], pairs)
    v.effective_sdkconfig = merged
    v.flash_size = flash or IDF_DEFAULT_FLASH_SIZE
    v.partition_table = _partition_table(merged)
    v.psram = merged.get("CONFIG_SPIRAM") == "y"
