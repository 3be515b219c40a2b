"""Read the inputs of one expression bundle the way esp_emote_assets' ``build_all.py``/``build.py`` find them.

For resolution R (``320_240``, ``360_360``, ...) every path is looked up in the external dir first, then in
the component: ``R/config.json`` (``text_font``, default ``none``; ``emoji_collection``, default
``emoji_large``), ``font/<text_font>.bin``, the emoji collection dir, ``R/emote.json`` (a list of
``{emote, src, loop, fps}``) and ``R/layout.json`` (kept verbatim in the index).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xzbuild.core.errors import Location, UserError


@dataclass
class ExpressionInputs:
    """Everything that goes into one expression bundle, read from disk."""

    resolution: str
    text_font: tuple[str, bytes] | None = None
    emotes: list[dict[str, Any]] = field(default_factory=list)  # ordered entries of emote.json (deduplicated)
    collection: dict[str, bytes] = field(default_factory=dict)  # emoji collection: relative path -> bytes
    layout: Any = None
    missing: list[str] = field(default_factory=list)  # emotes whose src file is absent (packed as "lack")


class Layers:
    """Path lookup with upstream's rule: the external dir when the path exists there, else the component."""

    def __init__(self, component: Path, external: dict[str, Path] | None = None) -> None:
        self.component = component
        self.external = external or {}

    def file(self, rel: str) -> Path | None:
        """A file by relative path, external first."""
        if rel in self.external:
            return self.external[rel]
        path = self.component / rel
        return path if path.is_file() else None

    def tree(self, rel: str) -> dict[str, Path] | None:
        """Files under a directory (relative to it), from the external dir if it has that directory."""
        prefix = rel.rstrip("/") + "/"
        ext = {k[len(prefix):]: p for k, p in self.external.items() if k.startswith(prefix)}
        if ext:
            return ext
        base = self.component / rel
        if not base.is_dir():
            return None
        return {str(p.relative_to(base)): p for p in base.rglob("*") if p.is_file()}


def vocat_staging(component: Path, board_dir: Path, resolution: str, collection: str = "emoji_large") -> dict[str, Path]:
    """The external dir upstream's CMake stages for EMOTE_EXTERNAL_PATH boards (ESP-VoCat): the component's
    emoji collection plus the board's ``emoji/*.eaf``, the component's ``R/layout.json`` and the board's
    ``assets/R/*`` (its ``emote.json``)."""
    out: dict[str, Path] = {}
    src = component / collection
    if src.is_dir():
        out.update({f"{collection}/{p.relative_to(src)}": p for p in src.rglob("*") if p.is_file()})
    for p in sorted((board_dir / "emoji").glob("*.eaf")):
        out[f"{collection}/{p.name}"] = p
    if (component / resolution / "layout.json").is_file():
        out[f"{resolution}/layout.json"] = component / resolution / "layout.json"
    board_res = board_dir / "assets" / resolution
    if board_res.is_dir():
        out.update({f"{resolution}/{p.relative_to(board_res)}": p for p in board_res.rglob("*") if p.is_file()})
    return out


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read JSON ({exc})", Location(str(path))) from None


def load_inputs(layers: Layers, resolution: str) -> ExpressionInputs:
    """Read config, font, emotes, collection and layout for ``resolution``; a missing input is a UserError."""
    cfg_path = layers.file(f"{resolution}/config.json")
    if cfg_path is None:
        raise UserError(f"esp_emote_assets has no {resolution}/config.json; this resolution is not supported "
                        "by the component", Location(str(layers.component)))
    cfg = _json(cfg_path)
    if not isinstance(cfg, dict):
        raise UserError("expected an object with text_font and emoji_collection", Location(str(cfg_path)))
    inputs = ExpressionInputs(resolution)
    text_font = str(cfg.get("text_font", "none"))
    if text_font != "none":
        font = layers.file(f"font/{text_font}.bin")
        if font is None:
            raise UserError(f"text font font/{text_font}.bin named by {resolution}/config.json is missing",
                            Location(str(layers.component)))
        inputs.text_font = (font.name, font.read_bytes())
    collection = str(cfg.get("emoji_collection", "emoji_large"))
    files = layers.tree(collection)
    if files is None:
        raise UserError(f"emoji collection {collection}/ is missing", Location(str(layers.component)))
    inputs.collection = {rel: p.read_bytes() for rel, p in sorted(files.items())}
    emote_path = layers.file(f"{resolution}/emote.json")
    if emote_path is not None:
        inputs.emotes = _emotes(_json(emote_path), emote_path)
        inputs.missing = list(dict.fromkeys(e["src"] for e in inputs.emotes if e["src"] not in inputs.collection))
    layout_path = layers.file(f"{resolution}/layout.json")
    if layout_path is not None:
        inputs.layout = _json(layout_path)
    return inputs


def _emotes(doc: Any, where: Path) -> list[dict[str, Any]]:
    """emote.json entries keyed by ``emote`` (a later entry replaces an earlier one in its place)."""
    if not isinstance(doc, list):
        raise UserError("emote.json: expected a list of {emote, src, loop, fps} objects", Location(str(where)))
    by_name: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(doc):
        if not isinstance(item, dict) or "emote" not in item:
            continue
        if "src" not in item or not isinstance(item["src"], str):
            raise UserError(f"emote.json entry {i} ({item['emote']!r}) has no src file name", Location(str(where)))
        by_name[str(item["emote"])] = item
    return list(by_name.values())
