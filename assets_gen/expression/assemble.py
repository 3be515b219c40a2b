"""Members, ``index.json`` and container of an expression bundle, as esp_emote_assets' ``build.py`` and
its ``spiffs_assets_gen.py`` make them.

Staging (``build/face/assets``): the text font, each emote's ``src`` file that exists, every ``*.bin`` file
and ``listen.eaf`` of the collection (flattened; these are the icons), then ``index.json`` =
``json.dump(indent=4, ensure_ascii=False)`` of ``version``, ``text_font``, ``emoji_collection`` (per emote
``{name, file, eaf: {lack, loop, fps}}``), ``icon_collection`` and ``layout``. The packer keeps the staged
files whose names end in ``.png .gif .jpg .bin .json .eaf`` and packs them in (extension, stem) order.
Upstream visits the collection with ``os.walk`` (filesystem order); we visit it sorted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from assets_gen.expression.load import ExpressionInputs
from assets_gen.mmap import MmapMember, member, pack_mmap, packer_order

SUPPORTED = (".png", ".gif", ".jpg", ".bin", ".json", ".eaf")  # build.py's support_format
INDEX = "index.json"


@dataclass(frozen=True)
class ExpressionBundle:
    """The packed bundle with what reports and checks need."""

    data: bytes
    index: dict[str, Any]
    members: tuple[tuple[str, int], ...]
    name_length: int
    cut_names: tuple[str, ...]  # names longer than the name field (the packer cuts them)

    @property
    def size(self) -> int:
        """Bytes written to flash."""
        return len(self.data)


def make_index(inputs: ExpressionInputs) -> tuple[dict[str, Any], dict[str, bytes]]:
    """``index.json`` as an object plus the staged files (name -> bytes) it refers to."""
    staged: dict[str, bytes] = {}
    index: dict[str, Any] = {"version": 1}
    if inputs.text_font:
        staged[inputs.text_font[0]] = inputs.text_font[1]
        index["text_font"] = inputs.text_font[0]
    emoji = []
    for e in inputs.emotes:
        src = e["src"]
        props: dict[str, Any] = {}
        if src in inputs.collection:
            staged[src] = inputs.collection[src]
        else:
            props["lack"] = True
        for key in ("loop", "fps"):
            if key in e:
                props[key] = e[key]
        entry: dict[str, Any] = {"name": e["emote"], "file": src}
        if props:
            entry["eaf"] = props
        emoji.append(entry)
    icons = []
    for rel, data in inputs.collection.items():
        name = rel.rsplit("/", 1)[-1]
        if name.lower().endswith(".bin") or name.lower() == "listen.eaf":
            staged[name] = data
            icons.append({"name": name.rsplit(".", 1)[0] if "." in name else name, "file": name})
    if emoji:
        index["emoji_collection"] = emoji
    if icons:
        index["icon_collection"] = icons
    if inputs.layout:
        index["layout"] = inputs.layout
    return index, staged


def index_bytes(index: dict[str, Any]) -> bytes:
    """The index file exactly as ``build.py`` writes it (4-space indent, UTF-8, no trailing newline)."""
    return json.dumps(index, indent=4, ensure_ascii=False).encode("utf-8")


def assemble(inputs: ExpressionInputs, name_length: int) -> ExpressionBundle:
    """Pack the bundle in esp_mmap_assets' 1.x layout with ``name_length``-byte names."""
    index, staged = make_index(inputs)
    staged[INDEX] = index_bytes(index)
    # Only top-level staged files are packed; a src with a directory part stays out, as upstream.
    names = [n for n in staged if "/" not in n and n.endswith(SUPPORTED)]
    members: list[MmapMember] = [member(n, staged[n]) for n in packer_order(names)]
    data = pack_mmap(members, name_length, version=1)
    cut = tuple(m.name for m in members if len(m.name.encode("utf-8")) > name_length)
    return ExpressionBundle(data, index, tuple((m.name, len(m.data)) for m in members), name_length, cut)
