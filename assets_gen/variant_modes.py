"""Per-variant bundles for the non-default Flash Assets choices: expression (emote) bundles and custom files.

Each returns the bytes to write plus a member listing, or raises :class:`MissingInput` when the data it
needs is not available here (a property of the inputs, reported per variant, never a crash).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assets_gen.bundle_plans import VariantPlan
from assets_gen.cache import Cache, make_key
from assets_gen.expression.load import Layers
from assets_gen.inputs import InputDirs
from xzbuild.core.errors import UserError, XzbuildError


class MissingInput(XzbuildError):
    """Input data for a bundle is not available (offline, component not in the tree, option not given)."""


@dataclass
class Made:
    """A bundle made by one of the modes."""

    data: bytes
    members: list[tuple[str, int]]
    notes: list[str] = field(default_factory=list)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def expression_layers(plan: VariantPlan, inputs: InputDirs) -> Layers:
    """The lookup layers of a variant's expression bundle (component + optional VoCat-style staging)."""
    from assets_gen.expression.load import vocat_staging

    component = inputs.emote_assets
    if component is None or not component.is_dir():
        raise MissingInput("esp_emote_assets component not available (pass --firmware with managed_components/ "
                           "or --emote-assets DIR)")
    external = None
    if plan.emote_external:
        board = inputs.board_dir(plan.board)
        if board is None or not board.is_dir():
            raise MissingInput(f"EMOTE_EXTERNAL_PATH needs the board's files (main/boards/{plan.board}); "
                               "pass --firmware")
        external = vocat_staging(component, board, plan.emote_resolution)
    return Layers(component, external)


def expression_key(plan: VariantPlan, inputs: InputDirs, cache: Cache) -> str:
    """Content key: every file the lookup layers can reach, plus the resolution and name length."""
    try:
        layers = expression_layers(plan, inputs)
    except MissingInput as exc:
        return make_key("expression-missing", reason=str(exc))
    files = [(str(p.relative_to(layers.component)), cache.digest(p)) for p in _files(layers.component)]
    ext = [(rel, cache.digest(p)) for rel, p in sorted(layers.external.items())]
    return make_key("expression", files=files, external=ext, res=plan.emote_resolution, n=plan.name_length)


def make_expression(plan: VariantPlan, inputs: InputDirs) -> Made:
    """Load, assemble and verify the expression bundle (byte-compatible with build_speaker_assets_bin)."""
    from assets_gen.expression.assemble import assemble
    from assets_gen.expression.load import load_inputs
    from assets_gen.expression.verify import verify_expression

    layers = expression_layers(plan, inputs)
    try:
        loaded = load_inputs(layers, plan.emote_resolution)
    except UserError as exc:
        raise MissingInput(str(exc)) from None
    bundle = assemble(loaded, plan.name_length)
    report = verify_expression(bundle.data, plan.name_length, plan.partition_size)
    notes = [f"expression bundle {plan.emote_resolution}, {plan.name_length}-byte names (esp_mmap_assets 1.x layout)"]
    if loaded.missing:
        notes.append(f"emote.json names files not in the collection (packed as lack): {', '.join(loaded.missing)}")
    if bundle.cut_names:
        notes.append(f"names cut to {plan.name_length} bytes by the packer: {', '.join(bundle.cut_names)}")
    if not report.ok:
        raise UserError(f"expression bundle fails verification: {'; '.join(report.errors)}")
    return Made(bundle.data, list(bundle.members), notes)


def custom_key(plan: VariantPlan, inputs: InputDirs, cache: Cache) -> str:
    """Content key of a custom assets file (or of its absence)."""
    path = inputs.custom_file(plan.custom_file)
    return make_key("custom", file=plan.custom_file, digest=cache.digest(path) if path else None,
                    emote=plan.emote_style)


def make_custom(plan: VariantPlan, inputs: InputDirs) -> Made:
    """CONFIG_FLASH_CUSTOM_ASSETS: the named file, checked against the partition and the firmware's reader."""
    from assets_gen.inspect import inspect_bundle

    value = plan.custom_file
    path = inputs.custom_file(value)
    if path is None:
        if value.startswith(("http://", "https://")):
            raise MissingInput(f"CONFIG_CUSTOM_ASSETS_FILE is a URL ({value}); nothing is downloaded here: put the "
                               f"file in <firmware>/build/ or pass --custom-assets DIR holding {value.rsplit('/', 1)[-1]}")
        raise MissingInput(f"CONFIG_CUSTOM_ASSETS_FILE {value!r} not found (relative to the firmware's main/; "
                           "pass --firmware or --custom-assets DIR)")
    data = path.read_bytes()
    assert plan.partition_size is not None
    if len(data) > plan.partition_size:
        raise UserError(f"custom assets file {path} is {len(data):,} B but the assets partition holds "
                        f"{plan.partition_size:,} B")
    if plan.emote_style:  # EmoteStrategy hands the partition to esp_mmap_assets (1.x, 32-byte names here)
        from assets_gen.mmap import read_mmap

        bundle = read_mmap(data, plan.name_length)
        if bundle.errors:
            raise UserError(f"custom assets file {path}: {'; '.join(bundle.errors)}")
        members = [(e.name, e.size) for e in bundle.entries]
    else:
        report = inspect_bundle(data, plan.partition_size, plan.display)
        if not report.ok:
            raise UserError(f"custom assets file {path} fails the firmware's checks: {'; '.join(report.errors)}")
        members = [(m.name, m.size) for m in report.members]
    return Made(data, members, [f"custom assets file {path.name} (CONFIG_FLASH_CUSTOM_ASSETS), checked, copied"])
