"""Decode the first frame of an EAF animation (esp_emote_gfx) for previews.

Layout (facts from esp_emote_gfx ``gfx_eaf_dec``): file ``0x89 "EAF"`` (or ``"AAF"``), u32 frames, u32 checksum
(plain byte sum of the table and frames), u32 length, then ``frames`` × (u32 size, u32 offset) and the frames,
each behind ``ZZ``. A frame: ``"_S"``, NUL, 6-byte version, u8 bit depth (4/8/24), u16 width, u16 height, u16
blocks, u16 block height, ``blocks`` × u32 block lengths, a palette of 2^depth BGRA entries (all-zero =
transparent), then the blocks; each block starts with its encoding: 0 RLE (count, value pairs), 1 Huffman
then RLE, 3 Huffman, 5 raw. Huffman blocks: u16 dictionary size, dictionary (padding bits, then symbol,
code length, code bytes big-endian), then the bit stream MSB first.
"""

from __future__ import annotations

import struct

from PIL import Image

from xzbuild.core.errors import UserError


def _rle(data: bytes) -> bytes:
    out = bytearray()
    for i in range(0, len(data) - 1, 2):
        out += bytes([data[i + 1]]) * data[i]
    return bytes(out)


def _huffman(data: bytes) -> bytes:
    dict_size = data[0] | data[1] << 8
    table, stream = data[2 : 2 + dict_size], data[2 + dict_size :]
    if not table:
        return b""
    padding, codes, pos = table[0], {}, 1
    while pos + 1 < len(table):
        symbol, length = table[pos], table[pos + 1]
        nbytes = (length + 7) // 8
        code = int.from_bytes(table[pos + 2 : pos + 2 + nbytes], "big")
        codes[(length, code)] = symbol
        pos += 2 + nbytes
    if not stream:  # a single-colour block: the dictionary's only symbol fills it (caller pads)
        return bytes([next(iter(codes.values()))]) if len(codes) == 1 else b""
    out = bytearray()
    bits = len(stream) * 8 - padding
    length = code = 0
    value = int.from_bytes(stream, "big")
    total = len(stream) * 8
    for i in range(bits):
        code = code << 1 | (value >> (total - 1 - i)) & 1
        length += 1
        sym = codes.get((length, code))
        if sym is not None:
            out.append(sym)
            length = code = 0
        elif length > 64:
            break
    return bytes(out)


def _block(data: bytes, size: int) -> bytes:
    kind, body = data[0], data[1:]
    if kind == 0:
        raw = _rle(body)
    elif kind == 1:
        raw = _rle(_huffman(body))
    elif kind == 3:
        raw = _huffman(body)
    elif kind == 5:
        raw = body
    else:
        raise UserError(f"EAF block encoding {kind} is not supported by the preview")
    if len(raw) == 1:
        raw = raw * size
    return raw[:size].ljust(size, b"\0")


def frame_count(data: bytes) -> int:
    """Number of frames of an EAF file."""
    if data[:1] != b"\x89" or data[1:4] not in (b"EAF", b"AAF"):
        raise UserError("not an EAF/AAF animation (bad magic)")
    return int(struct.unpack_from("<I", data, 4)[0])


def first_frame(data: bytes) -> Image.Image:
    """The first frame as an RGBA image."""
    frames = frame_count(data)
    if frames < 1:
        raise UserError("EAF animation has no frames")
    size, offset = struct.unpack_from("<II", data, 16)
    start = 16 + 8 * frames + offset
    frame = data[start : start + size]
    if frame[:2] != b"ZZ" or frame[2:4] != b"_S":
        raise UserError("EAF frame 0 is not a split-bitmap frame")
    f = frame[2:]
    depth = f[9]
    width, height, blocks, block_h = struct.unpack_from("<HHHH", f, 10)
    if depth not in (4, 8) or not width or not height or not blocks or not block_h:
        raise UserError(f"EAF frame 0: bit depth {depth}, {width}x{height}: not previewable")
    lens = struct.unpack_from(f"<{blocks}I", f, 18)
    colors = 1 << depth
    pal_at = 18 + 4 * blocks
    palette = [tuple(f[pal_at + 4 * i : pal_at + 4 * i + 4]) for i in range(colors)]
    pos = pal_at + 4 * colors
    indices = bytearray()
    per_block = width * block_h if depth == 8 else (width * block_h + 1) // 2
    for n in lens:
        indices += _block(f[pos : pos + n], per_block)
        pos += n
    if depth == 4:  # two pixels per byte, high nibble first
        indices = bytearray(v for b in indices for v in (b >> 4, b & 15))
    rgba = bytearray()
    for i in indices[: width * height]:
        b, g, r, a = palette[i]
        rgba += bytes((r, g, b, 0 if (b, g, r, a) == (0, 0, 0, 0) else 255))
    rgba = rgba.ljust(width * height * 4, b"\0")
    return Image.frombytes("RGBA", (width, height), bytes(rgba))
