"""``srmodels.bin``: ESP-SR model packs (spec §5), writer, directory loader and loader-faithful reader.

Layout: u32 model count; per model a 32-byte name and a u32 file count; per file a 32-byte name, a u32 start
(from the start of the pack) and a u32 length; then all payloads in the same order, with no padding.
Upstream visits models and files in ``os.walk`` order (filesystem dependent); we sort both by code point,
which is the order the reference pack was made with.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from assets_gen.names import FIELD_LEN, check_name, field_name, pad_name
from xzbuild.core.errors import Location, UserError
from xzbuild.core.fsutil import link_escape

MODEL_INFO = "_MODEL_INFO_"
_U32 = struct.Struct("<I")
_MODEL = struct.Struct("<32sI")
_FILE = struct.Struct("<32sII")


@dataclass(frozen=True)
class SrModel:
    """One model directory: its name and its files as (name, bytes), in pack order."""

    name: str
    files: tuple[tuple[str, bytes], ...]

    @property
    def size(self) -> int:
        """Payload bytes of this model."""
        return sum(len(data) for _, data in self.files)


FST = "fst"


def load_model_dir(path: Path) -> SrModel:
    """Read an ESP-SR model directory (``wn9s_nihaoxiaozhi/{_MODEL_INFO_, wn9_data, wn9_index}``)."""
    if not path.is_dir():
        raise UserError("not a model directory (expected e.g. wakenet_model/wn9s_nihaoxiaozhi)", Location(str(path)))
    check_name(path.name, "model", Location(str(path)))
    files: list[tuple[str, bytes]] = []
    for child in sorted(path.iterdir(), key=lambda p: p.name):
        problem = link_escape(child, path)
        if problem is not None:  # e.g. a link to /etc/shadow would be packed into a published bundle
            raise UserError(problem, Location(str(child)))
        if child.is_dir():
            # Upstream walks recursively but reads nested files from the wrong path; no real model has them.
            raise UserError("nested directories are not part of an ESP-SR model; remove it", Location(str(child)))
        check_name(child.name, "model file", Location(str(child)))
        files.append((child.name, child.read_bytes()))
    if not files:
        raise UserError("model directory is empty", Location(str(path)))
    # multinet_model/fst holds MultiNet 6/7's command lists; upstream packs it as a model without _MODEL_INFO_.
    if MODEL_INFO not in {name for name, _ in files} and path.name != FST:
        raise UserError(f"no {MODEL_INFO} file: this is not an ESP-SR model directory", Location(str(path)))
    return SrModel(path.name, tuple(files))


def pack_srmodels(models: list[SrModel]) -> bytes:
    """Pack models (sorted by name, files sorted by name) into ``srmodels.bin``."""
    ordered = sorted(models, key=lambda m: m.name)
    names = [m.name for m in ordered]
    if len(set(names)) != len(names):
        raise UserError(f"model names repeat: {names}; each model may appear once")
    file_total = sum(len(m.files) for m in ordered)
    header_len = _U32.size + _MODEL.size * len(ordered) + _FILE.size * file_total
    head = bytearray(_U32.pack(len(ordered)))
    payload = bytearray()
    for model in ordered:
        head += _MODEL.pack(pad_name(check_name(model.name, "model")), len(model.files))
        for fname, data in sorted(model.files, key=lambda f: f[0]):
            head += _FILE.pack(pad_name(check_name(fname, f"{model.name} file")), header_len + len(payload), len(data))
            payload += data
    assert len(head) == header_len
    return bytes(head) + bytes(payload)


@dataclass
class PackedModel:
    """A model as ``srmodel_load`` sees it: name, files (name, start, length) and its info line."""

    name: str
    files: list[tuple[str, int, int]]
    info: str = ""


@dataclass
class SrPack:
    """A parsed ``srmodels.bin`` with the loader's problems collected."""

    models: list[PackedModel] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_srmodels(data: bytes) -> SrPack:
    """Parse ``srmodels.bin`` the way ESP-SR's ``srmodel_load`` walks it, checking every offset."""
    pack = SrPack()
    if len(data) < 4:
        pack.errors.append("srmodels.bin is shorter than its 4-byte model count")
        return pack
    (count,) = _U32.unpack_from(data, 0)
    pos = 4
    for m in range(count):
        if pos + _MODEL.size > len(data):
            pack.errors.append(f"model {m}: header runs past the end ({count} models declared)")
            return pack
        raw, nfiles = _MODEL.unpack_from(data, pos)
        pos += _MODEL.size
        name, _ = field_name(raw)  # the loader copies 32 bytes and adds a NUL, so a full field is fine
        model = PackedModel(name, [])
        for f in range(nfiles):
            if pos + _FILE.size > len(data):
                pack.errors.append(f"model {name!r} file {f}: header runs past the end")
                pack.models.append(model)
                return pack
            fraw, start, length = _FILE.unpack_from(data, pos)
            pos += _FILE.size
            fname, terminated = field_name(fraw)
            if not terminated:
                pack.errors.append(f"model {name!r}: file name fills all {FIELD_LEN} bytes with no NUL")
            if start + length > len(data):
                pack.errors.append(f"model {name!r} file {fname!r}: [{start}, +{length}) is past the end {len(data)}")
            model.files.append((fname, start, length))
        pack.models.append(model)
    for model in pack.models:
        _check_model(model, data, pos, pack)
    return pack


def _check_model(model: PackedModel, data: bytes, header_len: int, pack: SrPack) -> None:
    for fname, start, length in model.files:
        if start < header_len and length:
            pack.errors.append(f"model {model.name!r} file {fname!r} starts at {start}, inside the header")
    info = [(s, n) for f, s, n in model.files if f == MODEL_INFO]
    if not info:
        pack.warnings.append(f"model {model.name!r} has no {MODEL_INFO}; ESP-SR cannot identify it")
        return
    start, length = info[0]
    text = data[start : start + length].decode("utf-8", "replace")
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    model.info = lines[0].strip() if lines else ""
    if not model.name.startswith(("wn", "mn", "fst", "nsnet", "vadnet")):
        pack.warnings.append(f"model {model.name!r}: the firmware only uses models named wn*/mn*")
