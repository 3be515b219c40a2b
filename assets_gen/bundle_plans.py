"""Per-variant bundle plans: what each variant's ``assets.bin`` contains, decided from the board model.

Planning is pure and cheap once the board model is loaded, but loading 150 board files is not; plans are
therefore cached under a key made of every file under ``boards/`` and the overrides, so an unchanged tree
is planned without parsing YAML at all.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assets_gen.cache import Cache, make_key
from assets_gen.display import display_size
from assets_gen.firmware_inputs import FirmwareTree
from assets_gen.flashmode import flash_assets
from assets_gen.index import Multinet
from assets_gen.textfont import FontProfile, profile_for
from assets_gen.wakeword import WakeWordPlan, config_from_assignments, plan_from_config
from xzbuild.core.boardsdir import HOW
from xzbuild.core.errors import UserError

if TYPE_CHECKING:
    from xzbuild.model import BoardSet, Variant

PLAN_VERSION = "3"
DEFAULT_TEXT_FONT = "font_noto_sans_basic_14_1"  # main/CMakeLists.txt, before the board chain
DEFAULT_EMOTE_RESOLUTION = "320_240"  # main/CMakeLists.txt EMOTE_RESOLUTION default  # bump when planning rules change


@dataclass
class Overrides:
    """User overrides that apply to every selected variant."""

    font: Path | None = None
    emoji_dir: Path | None = None
    emoji_size: int | None = None
    background: Path | None = None
    background_dark: Path | None = None
    wake_words: list[str] = field(default_factory=list)
    esp_sr: Path | None = None
    firmware: Path | None = None  # a firmware checkout: managed components and board files are read from it
    otto_gif: Path | None = None  # the otto-gif collection dir (component's gifs/)
    emote_assets: Path | None = None  # the esp_emote_assets component dir
    fonts: Path | None = None  # the xiaozhi-fonts component dir (cbin/, manifest.json)
    custom_assets: Path | None = None  # a dir holding CONFIG_CUSTOM_ASSETS_FILE downloads by file name

    def fingerprint(self) -> dict[str, Any]:
        """What of the overrides changes a plan (file contents are keyed later, per member)."""
        return {"font": str(self.font or ""), "emoji_dir": bool(self.emoji_dir), "emoji_size": self.emoji_size,
                "background": bool(self.background or self.background_dark), "wake": list(self.wake_words)}

    def firmware_tree(self) -> FirmwareTree | None:
        """The ``--firmware`` tree, checked."""
        return FirmwareTree.open(self.firmware) if self.firmware else None


@dataclass
class VariantPlan:
    """What one variant's bundle contains, before anything is made."""

    name: str
    board: str
    target: str
    partition_table: str
    partition_size: int | None
    font: FontProfile | None = None
    emoji: tuple[str, int] | None = None  # ("noto" | "dir", size)
    wake: WakeWordPlan = field(default_factory=lambda: WakeWordPlan("disabled"))
    display: tuple[int, int] | None = None
    skip: str = ""
    notes: list[str] = field(default_factory=list)
    mode: str = "default"  # the Flash Assets choice: default | custom | expression | none
    custom_file: str = ""  # CONFIG_CUSTOM_ASSETS_FILE
    emote_resolution: str = ""  # expression bundles: the esp_emote_assets resolution dir
    name_length: int = 16  # expression bundles: CONFIG_MMAP_FILE_NAME_LENGTH
    emote_external: bool = False  # expression bundles: EMOTE_EXTERNAL_PATH staging (board files overlay)
    emote_style: bool = False  # the firmware reads the partition with esp_mmap_assets (EmoteStrategy)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (for the plan cache)."""
        out = asdict(self)
        out["font"] = None if self.font is None else {**asdict(self.font), "source": str(self.font.source)}
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> VariantPlan:
        """Inverse of :meth:`to_json`."""
        font = d["font"]
        w = d["wake"]
        custom = w.get("custom")
        wake = WakeWordPlan(w["kind"], tuple(w["wakenet"]), tuple(w["multinet"]),
                            Multinet(custom["language"], custom["threshold"], tuple(map(tuple, custom["commands"])),
                                     custom["duration"]) if custom else None)
        return cls(d["name"], d["board"], d["target"], d["partition_table"], d["partition_size"],
                   FontProfile(font["size"], font["bpp"], font["autohint_off"], Path(font["source"]),
                               font["face_index"], font["charset"], font["bundle_id"]) if font else None,
                   tuple(d["emoji"]) if d["emoji"] else None,  # type: ignore[arg-type]
                   wake, tuple(d["display"]) if d["display"] else None,  # type: ignore[arg-type]
                   d["skip"], list(d["notes"]), d["mode"], d["custom_file"], d["emote_resolution"],
                   d["name_length"], d["emote_external"], d["emote_style"])


def partition_size(boards_root: Path, table: str) -> int | None:
    """Size of the ``assets`` partition of a board's table (``partitions/v2/16m.csv``), None if it has none."""
    from xzbuild.partitions import read_csv

    path = boards_root / table
    if not path.is_file():
        raise UserError(f"partition table {table!r} not found under {boards_root}")
    part = read_csv(path).find("assets")
    return None if part is None else part.size


def plan_variant(variant: Variant, boards_root: Path, ov: Overrides) -> VariantPlan:
    """Resolve one variant's bundle contents from the board model and the overrides."""
    k = variant.kconfig
    plan = VariantPlan(variant.full_name, variant.board.dir, variant.target, variant.partition_table,
                       partition_size(boards_root, variant.partition_table))
    if plan.partition_size is None:
        plan.skip = f"{variant.partition_table} has no assets partition (v1 layout)"
        return plan
    config = config_from_assignments(variant.effective_sdkconfig)
    fa = flash_assets(config, bool(k and k.emote_style))
    plan.mode, plan.name_length = fa.mode, fa.name_length
    # The emote display reads the partition with esp_mmap_assets (EmoteStrategy), whatever the choice.
    plan.emote_style = bool(k and k.emote_style) and config.get("USE_EMOTE_MESSAGE_STYLE") == "y"
    if fa.mode == "none":
        plan.skip = "CONFIG_FLASH_NONE_ASSETS: the firmware flashes nothing to its assets partition"
        return plan
    if fa.mode == "custom":
        plan.custom_file = fa.custom_file
        return plan
    if fa.mode == "expression":
        assert k is not None
        plan.emote_resolution = k.emote_resolution or DEFAULT_EMOTE_RESOLUTION
        plan.emote_external = "EMOTE_EXTERNAL_PATH" in k.extra_cmake
        plan.display = display_size(variant)
        return plan
    # CMake sets BUILTIN_TEXT_FONT to font_noto_sans_basic_14_1 before the board chain; boards keep it
    # unless their branch sets another one.
    plan.font = profile_for((k.text_font if k else None) or DEFAULT_TEXT_FONT, ov.font)
    if ov.font is not None and plan.font is None:
        plan.notes.append("board has no assets text font profile; --font ignored")
    collection = k.emoji_collection if k else None
    if ov.emoji_dir is not None:
        plan.emoji = ("dir", ov.emoji_size or _collection_size(collection) or 64)
    elif collection and collection.startswith("noto-color-emoji_"):
        plan.emoji = ("noto", ov.emoji_size or _collection_size(collection) or 64)
    elif collection == "otto-gif":
        plan.emoji = ("otto", 0)  # the component's GIFs, packed unchanged
    elif collection:
        plan.notes.append(f"emoji collection {collection!r} is unknown to upstream's builder; pass --emoji-dir")
    plan.wake = _wake_plan(variant, config, ov, plan)
    plan.display = display_size(variant)
    if (ov.background or ov.background_dark) and plan.display is None:
        plan.notes.append("board has no pixel display size; background skipped")
    return plan


def _collection_size(name: str | None) -> int | None:
    tail = (name or "").rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _wake_plan(variant: Variant, config: dict[str, str], ov: Overrides, plan: VariantPlan) -> WakeWordPlan:
    base = plan_from_config(variant.target, variant.psram, config)
    if not ov.wake_words:
        return base
    if [w.lower() for w in ov.wake_words] == ["none"]:
        return WakeWordPlan("disabled")
    if base.kind not in ("esp", "afe"):
        plan.notes.append(f"wake word is {base.kind} on this variant (target/PSRAM); --wake-word ignored")
        return base
    return WakeWordPlan(base.kind, wakenet=tuple(Path(w).name for w in ov.wake_words))


def select_variants(bs: BoardSet, names: list[str], all_variants: bool) -> list[Variant]:
    """The variants named (by name or full name), or all of them."""
    if all_variants:
        if names:
            raise UserError("give variant names or --all, not both")
        return bs.variants()
    if not names:
        raise UserError("no variants selected; give VARIANT names or --all")
    return [bs.variant(n) for n in dict.fromkeys(names)]


def tree_digest(root: Path) -> str:
    """SHA-256 over every file's relative path and bytes under ``root`` (sorted)."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


_board_sets: dict[str, BoardSet] = {}


def _load_boards(boards_dir: Path, digest: str) -> BoardSet:
    """The board model, loaded once per process for a given tree content (loading is the slow part)."""
    from xzbuild.model import load_boards

    if digest not in _board_sets:
        _board_sets[digest] = load_boards(boards_dir)
    return _board_sets[digest]


def plan_variants(boards_dir: Path, names: list[str], all_variants: bool, ov: Overrides, cache: Cache) -> list[VariantPlan]:
    """Plans of the selected variants, from the plan cache when nothing under ``boards_dir`` changed."""
    if not boards_dir.is_dir():
        raise UserError(f"board directory {boards_dir} not found; {HOW}")
    boards_digest = tree_digest(boards_dir)
    key = make_key("plans", boards=boards_digest, names=names, all=all_variants, ov=ov.fingerprint(),
                   version=PLAN_VERSION)
    cached = cache.get("plans", key)
    if cached is not None:
        return [VariantPlan.from_json(d) for d in json.loads(cached)]
    bs = _load_boards(boards_dir, boards_digest)
    plans = [plan_variant(v, bs.root, ov) for v in select_variants(bs, names, all_variants)]
    cache.put("plans", key, json.dumps([p.to_json() for p in plans], ensure_ascii=False).encode())
    return plans
