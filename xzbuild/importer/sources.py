"""Facts upstream build.py derives from board sources and from its own constant tables."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from xzbuild.core import sdkconfig_text
from xzbuild.model.types import CODEC_CLASSES, NETWORK_CLASSES, SourceFacts

SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}


def board_source_text(board_dir: Path) -> str:
    """All C/C++ sources of the dir, recursively, in path order (as upstream ``_board_source_text``)."""
    parts = [p.read_text(encoding="utf-8", errors="replace")
             for p in sorted(board_dir.rglob("*")) if p.suffix in SOURCE_SUFFIXES and p.is_file()]
    return "\n".join(parts)


def source_facts(board_dir: Path) -> SourceFacts:
    """LcdDisplay use (display_style offered), WifiBoard (wifi_provisioning), common camera (mirror options),
    and the network the board class is built on."""
    text = board_source_text(board_dir)
    return SourceFacts(
        lcd_display=bool(re.search(r"\b[A-Za-z0-9_]*LcdDisplay\b", text)),
        wifi_board="wifi_board.h" in text or bool(re.search(r"\bWifiBoard\b", text)),
        camera="new Esp32Camera" in text or "new EspVideo" in text,
        network=board_network(text),
        codec=board_codec(text),
    )


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def board_network(text: str) -> str:
    """The network base class of the class ``DECLARE_BOARD`` names, followed through the board's own bases
    (``WaveshareEsp32p4nano : WaveshareEsp32p4nanoBase : WifiBoard``); commented-out code does not count."""
    code = _COMMENTS.sub("", text)
    bases = dict(re.findall(r"\bclass\s+(\w+)\s*(?:final\s*)?:\s*(?:public|protected|private)?\s*(\w+)", code))
    # `using Base = WifiBoard;` under #if/#else: the last one is the #else branch, the Kconfig default
    # (waveshare/esp32-p4-nano: EthernetBoard only with CONFIG_XIAOZHI_NETWORK_ETHERNET).
    bases.update(re.findall(r"\busing\s+(\w+)\s*=\s*(\w+)\s*;", code))
    for name in re.findall(r"\bDECLARE_BOARD\s*\(\s*(\w+)\s*\)", code):
        seen: set[str] = set()
        while name not in NETWORK_CLASSES and name in bases and name not in seen:
            seen.add(name)
            name = bases[name]
        if name in NETWORK_CLASSES:
            return NETWORK_CLASSES[name]
    return ""


def board_codec(text: str) -> str:
    """The chips of the codec classes the sources construct (``static Es8311AudioCodec audio_codec(...)``,
    ``new BoxAudioCodec(...)``), a board's own subclass followed to upstream's class; alternatives (``#ifdef``
    versions, a runtime choice) joined by " or ". "" when a constructed codec class is not one of upstream's."""
    code = _COMMENTS.sub("", text)
    bases = dict(re.findall(r"\bclass\s+(\w+)\s*(?:final\s*)?:\s*(?:public|protected|private)?\s*(\w+)", code))
    built = re.findall(r"\bnew\s+(\w+)\s*[({]|\bstatic\s+(\w+)\s+\w+\s*[({]|make_unique<\s*(\w+)\s*>", code)
    chips: set[str] = set()
    for name in {next(n for n in group if n) for group in built}:
        seen: set[str] = set()
        while name not in CODEC_CLASSES and name in bases and name not in seen and name.endswith("Codec"):
            seen.add(name)
            name = bases[name]
        if name in CODEC_CLASSES:
            chips.add(CODEC_CLASSES[name])
        elif name.endswith("AudioCodec") or name.endswith("Codec"):
            return ""  # a codec of the board's own: the model's codec part tells
    return " or ".join(sorted(chips))


def guess_target(board_dir: Path) -> str | None:
    """For dirs with no config.json and no Kconfig target: a board sdkconfig's ``CONFIG_IDF_TARGET``, else
    the target the dir name or the sources mention most."""
    for path in sorted(board_dir.glob("sdkconfig*")):
        text = path.read_text(encoding="utf-8", errors="replace")
        raw = sdkconfig_text.last_values(sdkconfig_text.read_text(text, str(path))).get("CONFIG_IDF_TARGET", "")
        if raw.startswith('"') and re.fullmatch(r"\w+", target := sdkconfig_text.unquote(raw)):
            return target
    for token, target in (("s31", "esp32s31"), ("p4", "esp32p4"), ("s3", "esp32s3"), ("c3", "esp32c3"),
                          ("c5", "esp32c5"), ("c6", "esp32c6")):
        if token in re.split(r"[^a-z0-9]+", board_dir.name.lower()):
            return target
    text = board_source_text(board_dir).lower()
    counts = {t: len(re.findall(rf"\b{t}\b", text)) for t in ("esp32s3", "esp32p4", "esp32c3", "esp32c5",
                                                             "esp32c6", "esp32s31")}
    best = max(counts, key=lambda t: counts[t])
    return best if counts[best] else None


def build_py_constants(build_py: Path) -> tuple[set[str], dict[str, str]]:
    """``_DYNAMIC_CAMERA_MIRROR_BOARD_CONFIGS`` and ``_OPTIONAL_CAMERA_ENABLE_SYMBOLS`` from scripts/build.py."""
    dynamic: set[str] = set()
    optional: dict[str, str] = {}
    if not build_py.is_file():
        return dynamic, optional
    tree = ast.parse(build_py.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if name == "_DYNAMIC_CAMERA_MIRROR_BOARD_CONFIGS":
                dynamic = {str(v).removeprefix("CONFIG_") for v in value}
            elif name == "_OPTIONAL_CAMERA_ENABLE_SYMBOLS":
                optional = {str(k).removeprefix("CONFIG_"): str(v) for k, v in value.items()}
    return dynamic, optional


def sdkconfig_layer(path: Path) -> dict[str, str]:
    """The assignments of a sdkconfig.defaults file (key without CONFIG_, value as written; ``n`` for
    ``# CONFIG_X is not set``), read by ``xzbuild.core.sdkconfig_text``; a missing file has none."""
    return sdkconfig_text.last_values(sdkconfig_text.read_file(path), prefixed=False)
