"""Cross-file and semantic rules: upstream's §14 checklist plus hardware sanity (pins, flash fit)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from xzbuild.core.errors import UserError, UserErrors
from xzbuild.model.naming import (
    MANUFACTURER_RE,
    natural_label_key,
)
from xzbuild.model.types import Board, Variant

if TYPE_CHECKING:
    from xzbuild.model.types import BoardSet

# GPIOs that exist per target (ESP-IDF soc caps); pins outside these sets are board-file mistakes.
_GPIOS: dict[str, set[int]] = {
    "esp32": set(range(0, 20)) | {21, 22, 23, 25, 26, 27} | set(range(32, 40)),
    "esp32s3": set(range(0, 22)) | set(range(26, 49)),
    "esp32c3": set(range(0, 22)),
    "esp32c5": set(range(0, 29)),
    "esp32c6": set(range(0, 31)),
    "esp32p4": set(range(0, 55)),
    "esp32s31": set(range(0, 63)),
}
_FORBIDDEN_APPEND = re.compile(r"^CONFIG_(LANGUAGE_|SR_WN_)")


def gpios_of(target: str) -> set[int]:
    """GPIO numbers that exist on ``target`` (empty for unknown targets)."""
    return _GPIOS.get(target, set())


def validate_board_set(bs: BoardSet, complete: bool = True) -> list[UserError]:
    """Every rule violation in the set, one UserError each (file:line:col of the offending key).

    ``complete`` is False when some files could not be read; set-wide rules that would only report the
    missing boards (a target without a default board) are then skipped.
    """
    errors: list[UserError] = []
    for board in bs.boards:
        errors.extend(_board_rules(bs, board))
    errors.extend(_uniqueness(bs))
    if complete:
        errors.extend(_target_defaults(bs))
    return errors


def _err(board: Board, key: str, message: str) -> UserError:
    return UserError(f"{key}: {message}" if key else message, board.location(key))


def _board_rules(bs: BoardSet, board: Board) -> list[UserError]:
    out: list[UserError] = []
    nested = "/" in board.dir
    if nested:
        expected = board.dir.split("/")[0]
        if board.manufacturer is None:
            out.append(_err(board, "", f"manufacturer is required for boards under {expected}/; add "
                                       f"'manufacturer: {expected}'"))
        elif board.manufacturer != expected:
            out.append(_err(board, "manufacturer", f"'{board.manufacturer}' does not match the directory "
                                                   f"'{expected}'; use '{expected}' or move the file"))
        if not MANUFACTURER_RE.match(expected):
            out.append(_err(board, "", f"manufacturer directory '{expected}' must match ^[a-z0-9-]+$"))
    elif board.manufacturer is not None:
        out.append(_err(board, "manufacturer", f"flat boards have no manufacturer; move the file to "
                                               f"boards/{board.manufacturer}/{board.dir}.yaml or drop the key"))
    if not board.has_config_json and board.variants:
        out.append(_err(board, "config_json", "a board without config.json cannot have variants; remove one"))
    for i, k in enumerate(board.kconfig):
        out.extend(_kconfig_rules(board, k, f"kconfig.{i}"))
    for v in board.variants:
        out.extend(_variant_rules(bs, board, v))
    if not board.hardware_loaded:
        return out  # loaded for the matrix only: `boards check` runs the hardware rules
    out.extend(_pin_rules(board))
    from xzbuild.model.hwrefs import reference_errors

    out.extend(reference_errors(board))
    from xzbuild.parts import count_hardware_markers

    if count_hardware_markers(board.config_h) > 1:
        out.append(_err(board, "config_h", "the 'hardware' marker may appear only once (it places the top-level "
                                           "hardware block); remove the others"))
    return out


def _kconfig_rules(board: Board, k: Any, path: str) -> list[UserError]:
    """Rules between keys (each key's own form is checked by the loader, xzbuild.model.keys)."""
    out: list[UserError] = []
    if k.target and k.target != board.target and len(board.kconfig) == 1:
        out.append(_err(board, f"{path}.target", f"'{k.target}' differs from the board target '{board.target}'"))
    return out


def _variant_rules(bs: BoardSet, board: Board, v: Variant) -> list[UserError]:
    out: list[UserError] = []
    if "_" in v.full_name:
        out.append(UserError(f"{v.path_key}.name: release names may not contain '_'", v.location("name")))
    defaults = bs.firmware.defaults_for(board.target)
    for line in v.sdkconfig_append:
        key, _, value = line.partition("=")
        short = key.removeprefix("CONFIG_")
        if v.chip_variant == "p4" and line in ("CONFIG_ESP32P4_SELECTS_REV_LESS_V3=y", "CONFIG_ESP32P4_REV_MIN_100=y"):
            continue
        if _FORBIDDEN_APPEND.match(key):
            out.append(UserError(f"{v.path_key}.sdkconfig.{short}: language and wake word are build-time options; "
                                 "remove this key", v.location(f"sdkconfig.{short}")))
        elif (short.startswith("ESPTOOLPY_FLASHSIZE_") or short == "PARTITION_TABLE_CUSTOM_FILENAME") and \
                defaults.get(short) == value and not _overrides_other(defaults, short, value):
            out.append(UserError(f"{v.path_key}.sdkconfig.{short}: repeats the {board.target} default; "
                                 "remove it", v.location(f"sdkconfig.{short}")))
    if board.hardware_loaded:  # the partition CSVs are hardware too; `boards check` fits them to the flash
        out.extend(_flash_fit(bs, v))
    out.extend(_build_option_rules(bs, board, v))
    return out


def offered_build_options(bs: BoardSet, v: Variant) -> dict[str, list[object]]:
    """Build options upstream offers for ``v`` (key → allowed values), following build.py §10.3."""
    k = v.kconfig
    facts = v.board.source_facts
    offered: dict[str, list[object]] = {}
    if k is not None and k.display_model_choice:
        model = bs.firmware.display_models.get(k.display_model_choice)
        if model:
            offered["display_model"] = [s for s, _ in model.entries if s != "LCD_CUSTOM"]
    if facts.lcd_display:
        styles: list[object] = ["default", "wechat"]
        offered["display_style"] = styles + (["emote"] if k and k.emote_style else [])
        offered["multiline_chat"] = [True, False]
    if k is not None and k.device_aec:
        offered["aec_mode"] = ["off", "device"]
    if v.target != "esp32p4" and facts.wifi_board:
        offered["wifi_provisioning"] = ["hotspot", "blufi"]
    enable = k.camera_enable_symbol if k else None
    camera = facts.camera and (enable is None or f"{enable}=y" in v.sdkconfig_append)
    if camera and not (k and k.camera_mirror_dynamic):
        offered["camera_hmirror"] = [True, False]
        offered["camera_vflip"] = [True, False]
    return offered


def _build_option_rules(bs: BoardSet, board: Board, v: Variant) -> list[UserError]:
    out: list[UserError] = []
    offered = offered_build_options(bs, v)
    for key, value in v.build_options.items():
        where = v.location(f"build_options.{key}")
        path = f"{v.path_key}.build_options.{key}"
        if key not in offered:
            have = ", ".join(offered) or "none"
            out.append(UserError(f"{path}: this board does not offer '{key}' (offered: {have}); remove it", where))
        elif value not in offered[key] or isinstance(value, bool) != isinstance(offered[key][0], bool):
            allowed = ", ".join(str(x).lower() if isinstance(x, bool) else str(x) for x in offered[key])
            out.append(UserError(f"{path}: {value!r} is not allowed; use one of {allowed}", where))
    return out


def _overrides_other(defaults: dict[str, str], key: str, value: str) -> bool:
    # FLASHSIZE_16MB=y is not redundant when the target layer selects another size (e.g. esp32's 4MB).
    if not key.startswith("ESPTOOLPY_FLASHSIZE_") or value != "y":
        return False
    return any(k.startswith("ESPTOOLPY_FLASHSIZE_") and k != key and val == "y" for k, val in defaults.items())


_table_cache: dict[str, Any] = {}


def _flash_fit(bs: BoardSet, v: Variant) -> list[UserError]:
    """The partition table must exist under boards/partitions and end within the flash."""
    parts_dir = bs.root / "partitions"
    if not parts_dir.is_dir():
        return []
    from xzbuild.partitions.refs import builtin_text

    builtin = builtin_text(v.partition_table)
    if builtin is not None:  # ESP-IDF's own table (no custom one configured): it only has to fit the flash
        from xzbuild.partitions import parse_csv, parse_flash_size

        end = parse_csv(builtin, v.partition_table).flash_end()
        if end > parse_flash_size(v.flash_size):
            return [UserError(f"{v.path_key}: ESP-IDF's table {v.partition_table} ends at {end:#x} but the flash "
                              f"is {v.flash_size}; choose a larger flash size", v.location())]
        return []
    rel = v.partition_table.removeprefix("partitions/")
    key = "PARTITION_TABLE_CUSTOM_FILENAME"
    where = v.location(f"sdkconfig.{key}")
    from xzbuild.partitions.refs import is_safe_ref

    if not is_safe_ref(v.partition_table):
        return [UserError(f"{v.path_key}: partition table '{v.partition_table}' is not a relative .csv path inside "
                          "the firmware tree; name a table under partitions/", where)]
    path = parts_dir / rel
    if not path.is_file():
        return [UserError(f"{v.path_key}: partition table '{v.partition_table}' not found in {parts_dir}; "
                          "add the CSV or pick an existing table", where)]
    try:
        from xzbuild.partitions import parse_flash_size, read_csv
    except ImportError:
        return []
    try:
        size = parse_flash_size(v.flash_size)
    except UserError as exc:
        return [UserError(f"{v.path_key}: {exc.message}", where)]
    try:
        stat = path.stat()
        cache_key = f"{path}:{stat.st_mtime_ns}:{stat.st_size}"  # re-read when the CSV changes
        if cache_key not in _table_cache:
            _table_cache[cache_key] = read_csv(path, verify=False)
        end = _table_cache[cache_key].flash_end()
    except UserErrors as exc:  # reported at the CSV's own lines; the loader merges the copies other boards add
        return list(exc.errors)
    except UserError as exc:
        if exc.location is not None:
            return [exc]
        return [UserError(f"{v.path_key}: partition table '{v.partition_table}' is invalid ({exc.message})", where)]
    if end > size:
        return [UserError(f"{v.path_key}: partition table '{v.partition_table}' ends at {end:#x} but the flash is "
                          f"{v.flash_size}; choose a larger flash size or a smaller table", where)]
    return []


def _pin_rules(board: Board) -> list[UserError]:
    """Pins must exist on the chip; one GPIO serves one signal unless both are on the same shared bus or the
    board lists the pin in ``shared_gpios``. Each scope (file body, each ``#if`` branch) is checked on its own
    because alternative branches legitimately reuse pins."""
    from xzbuild.parts import gpio_conflicts, gpio_uses
    from xzbuild.parts.items import Conditional, HardwareSlot

    # Multi-target dirs (esp-spot: S3 and C5 symbols) keep pins of every target in target-specific branches.
    valid: set[int] = set()
    for target in {board.target, *(k.target for k in board.kconfig)}:
        valid |= gpios_of(target)
    out: list[UserError] = []

    def scan(hw: dict[str, dict[str, Any]], prefix: str) -> None:
        for pin, key, _bus in gpio_uses(hw):
            if valid and pin not in valid:
                chips = "/".join(sorted({board.target, *(k.target for k in board.kconfig)}))
                out.append(_err(board, f"{prefix}.{key}", f"GPIO {pin} does not exist on {chips}; check the "
                                                          "schematic"))
        for pin, key, other in gpio_conflicts(hw):
            if pin not in board.shared_gpios:
                out.append(_err(board, f"{prefix}.{key}", f"GPIO {pin} is already used by {prefix}.{other}; give "
                                                          "each signal its own pin (or list it in shared_gpios if "
                                                          "the board really shares it)"))

    scan(board.hardware, "hardware")

    def walk(items: list[Any], path: str) -> None:
        for i, item in enumerate(items):
            if isinstance(item, HardwareSlot) and item.values is not None:
                scan(item.values, f"{path}.{i}.hardware")
            elif isinstance(item, Conditional):
                for j, (_, body) in enumerate(item.branches):
                    walk(body, f"{path}.{i}.branches.{j}.items")

    walk(board.config_h, "config_h")
    return out


def _uniqueness(bs: BoardSet) -> list[UserError]:
    out: list[UserError] = []

    def unique(items: list[tuple[str, Board, str]], what: str) -> None:
        seen: dict[str, tuple[Board, str]] = {}
        for value, board, key in items:
            if not value:
                continue
            if value in seen:
                first, first_key = seen[value]
                out.append(_err(board, key, f"{what} '{value}' is already used by {first.location(first_key)}; "
                                            "pick another"))
            else:
                seen[value] = (board, key)

    unique([(b.type, b, "type") for b in bs.boards], "type")
    variants = [v for b in bs.boards for v in b.variants]
    unique([(v.name, v.board, f"{v.path_key}.name") for v in variants], "variant name")
    unique([(v.full_name, v.board, f"{v.path_key}.name") for v in variants], "full name")
    entries = [(k, b, f"kconfig.{i}") for b in bs.boards for i, k in enumerate(b.kconfig)]
    unique([(k.symbol, b, f"{p}.symbol") for k, b, p in entries], "Kconfig symbol")
    unique([(k.label, b, f"{p}.label") for k, b, p in entries], "Kconfig label")
    # Each label's sort key once; neighbours in sorted order are the only candidates for "sorts equal".
    ordered = sorted(((natural_label_key(k.label), k, b, p) for k, b, p in entries), key=lambda row: row[0])
    for (key1, k1, b1, p1), (key2, k2, _b2, p2) in zip(ordered, ordered[1:], strict=False):
        if k1.label != k2.label and key1 == key2:
            out.append(_err(b1, f"{p1}.label", f"sorts equal to '{k2.label}' ({p2}); make the labels differ"))
    return out


def _target_defaults(bs: BoardSet) -> list[UserError]:
    """Exactly one ``target_default`` Kconfig entry per target that has entries."""
    out: list[UserError] = []
    by_target: dict[str, list[tuple[Board, str]]] = {}
    targets: set[str] = set()
    for b in bs.boards:
        for i, k in enumerate(b.kconfig):
            targets.add(k.target)
            if k.target_default:
                by_target.setdefault(k.target, []).append((b, f"kconfig.{i}.target_default"))
    first_entry: dict[str, tuple[Board, str]] = {}
    for b in bs.boards:
        for i, k in enumerate(b.kconfig):
            first_entry.setdefault(k.target, (b, f"kconfig.{i}"))
    for target in sorted(targets):
        found = by_target.get(target, [])
        if not found:
            board, key = first_entry[target]
            out.append(_err(board, key, f"no Kconfig entry for {target} has 'target_default: true'; mark the "
                                        f"board {target} builds select by default"))
        if len(found) > 1:
            for board, key in found[1:]:
                out.append(_err(board, key, f"{target} already has a default board "
                                            f"({found[0][0].location(found[0][1])}); keep one"))
    return out
