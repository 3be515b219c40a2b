"""Opus helpers: encode/decode streams, packet duration from the TOC byte, offline speech, frame pacing.

Uses libopus through ``opuslib`` (Debian's libopus0). Speech comes from the ``espeak-ng`` program when it is
installed, otherwise a tone, so nothing is downloaded at run time. Encoded utterances are cached because a
reference server replays the same sentences to many devices.
"""

from __future__ import annotations

import asyncio
import functools
import io
import math
import shutil
import struct
import subprocess
import time
import wave
from array import array

import opuslib

from xzbuild.core.errors import XzbuildError

OPUS_RATES = (8000, 12000, 16000, 24000, 48000)
UPLINK_RATE = 16000  # what the firmware records and announces in its hello
DEFAULT_FRAME_MS = 60


class OpusPacketError(XzbuildError, ValueError):
    """Bytes that are not a structurally valid Opus packet (RFC 6716 §3)."""


def packet_duration_ms(packet: bytes) -> float:
    """Audio duration of one Opus packet, read from its TOC byte (and frame count byte for code 3)."""
    if not packet:
        raise OpusPacketError("empty Opus packet")
    toc = packet[0]
    config = toc >> 3
    if config < 12:  # SILK-only
        frame_ms = (10.0, 20.0, 40.0, 60.0)[config % 4]
    elif config < 16:  # hybrid
        frame_ms = (10.0, 20.0)[config % 2]
    else:  # CELT-only
        frame_ms = (2.5, 5.0, 10.0, 20.0)[config % 4]
    code = toc & 0x03
    if code == 0:
        count = 1
    elif code == 1:
        if (len(packet) - 1) % 2:
            raise OpusPacketError("code-1 Opus packet must carry two equal-size frames")
        count = 2
    elif code == 2:
        if len(packet) < 2:
            raise OpusPacketError("code-2 Opus packet is missing its frame length")
        count = 2
    else:
        if len(packet) < 2:
            raise OpusPacketError("code-3 Opus packet is missing its frame count byte")
        count = packet[1] & 0x3F
        if count == 0:
            raise OpusPacketError("code-3 Opus packet declares zero frames")
    duration = frame_ms * count
    if duration > 120.0:
        raise OpusPacketError(f"Opus packet lasts {duration} ms, more than the 120 ms limit")
    return duration


class OpusEncoderStream:
    """Encode 16-bit mono PCM into fixed-duration Opus packets."""

    def __init__(self, sample_rate: int = UPLINK_RATE, frame_ms: int = DEFAULT_FRAME_MS) -> None:
        if sample_rate not in OPUS_RATES:
            raise ValueError(f"Opus does not support {sample_rate} Hz; use one of {OPUS_RATES}")
        self.sample_rate = sample_rate
        self.frame_ms = frame_ms
        self.frame_samples = sample_rate * frame_ms // 1000
        self._encoder = opuslib.Encoder(sample_rate, 1, opuslib.APPLICATION_VOIP)

    def encode(self, pcm: bytes) -> list[bytes]:
        """Encode all of ``pcm`` (s16le mono); the last partial frame is padded with silence."""
        step = self.frame_samples * 2
        packets = []
        for start in range(0, len(pcm), step):
            chunk = pcm[start : start + step]
            if len(chunk) < step:
                chunk = chunk + b"\x00" * (step - len(chunk))
            packets.append(bytes(self._encoder.encode(chunk, self.frame_samples)))
        return packets


class OpusDecoderStream:
    """Decode Opus packets to 16-bit mono PCM at ``sample_rate``."""

    def __init__(self, sample_rate: int = UPLINK_RATE) -> None:
        if sample_rate not in OPUS_RATES:
            raise ValueError(f"Opus does not support {sample_rate} Hz; use one of {OPUS_RATES}")
        self.sample_rate = sample_rate
        self._decoder = opuslib.Decoder(sample_rate, 1)
        self._max_samples = sample_rate * 120 // 1000

    def decode(self, packet: bytes) -> bytes:
        """Decode one packet; raises ``OpusPacketError`` if libopus rejects it."""
        packet_duration_ms(packet)
        try:
            return bytes(self._decoder.decode(packet, self._max_samples))
        except opuslib.OpusError as exc:
            raise OpusPacketError(f"libopus rejected the packet: {exc}") from exc


def tone_pcm(seconds: float, sample_rate: int, freq: float = 440.0, amplitude: float = 0.3) -> bytes:
    """A sine tone as s16le mono PCM (the fallback when no speech synthesiser is installed)."""
    n = int(seconds * sample_rate)
    scale = amplitude * 32767
    samples = array("h", (int(scale * math.sin(2 * math.pi * freq * i / sample_rate)) for i in range(n)))
    return samples.tobytes()


def resample_linear(pcm: bytes, src_rate: int, dst_rate: int) -> bytes:
    """Linear-interpolation resampling of s16le mono PCM; good enough for synthetic speech."""
    if src_rate == dst_rate or not pcm:
        return pcm
    src = array("h")
    src.frombytes(pcm[: len(pcm) // 2 * 2])
    n_out = int(len(src) * dst_rate / src_rate)
    ratio = src_rate / dst_rate
    last = len(src) - 1
    out = array("h", bytes(2 * n_out))
    for i in range(n_out):
        pos = i * ratio
        j = int(pos)
        frac = pos - j
        a = src[j]
        b = src[j + 1] if j < last else a
        out[i] = int(a + (b - a) * frac)
    return out.tobytes()


def speech_pcm(text: str, sample_rate: int, voice: str = "en") -> tuple[bytes, str]:
    """Synthesise ``text`` offline; returns (s16le mono PCM at ``sample_rate``, source name).

    The source is ``"espeak-ng"`` or ``"tone"`` when espeak-ng is missing or fails.
    """
    exe = shutil.which("espeak-ng")
    if exe:
        try:
            wav = subprocess.run(
                [exe, "--stdout", "-v", voice, "--", text], capture_output=True, timeout=30, check=True
            ).stdout
            with wave.open(io.BytesIO(wav)) as wf:
                if wf.getsampwidth() == 2 and wf.getnchannels() == 1:
                    pcm = wf.readframes(wf.getnframes())
                    return resample_linear(pcm, wf.getframerate(), sample_rate), "espeak-ng"
        except (OSError, subprocess.SubprocessError, wave.Error, EOFError, struct.error):
            pass
    return tone_pcm(max(0.3, 0.08 * len(text)), sample_rate), "tone"


@functools.lru_cache(maxsize=256)
def speech_frames(text: str, sample_rate: int, frame_ms: int = DEFAULT_FRAME_MS, voice: str = "en") -> tuple[bytes, ...]:
    """Opus packets for ``text`` spoken offline (cached per text, rate, frame duration and voice)."""
    pcm, _source = speech_pcm(text, sample_rate, voice)
    return tuple(OpusEncoderStream(sample_rate, frame_ms).encode(pcm))


@functools.lru_cache(maxsize=64)
def tone_frames(seconds: float, sample_rate: int, frame_ms: int = DEFAULT_FRAME_MS, freq: float = 440.0) -> tuple[bytes, ...]:
    """Opus packets of a tone lasting ``seconds`` (cached), e.g. uplink audio for a virtual device."""
    return tuple(OpusEncoderStream(sample_rate, frame_ms).encode(tone_pcm(seconds, sample_rate, freq)))


class FramePacer:
    """Paces frames on an absolute schedule (start + i·frame_ms) so delays do not accumulate.

    ``await pacer.wait()`` sleeps until the next slot and returns the lateness in ms (≥ 0 normally); the
    lateness values are what a transcript reports as pacing jitter.
    """

    def __init__(self, frame_ms: float, start: float | None = None) -> None:
        self.frame_ms = frame_ms
        self.start = time.monotonic() if start is None else start
        self.index = 0

    async def wait(self) -> float:
        """Sleep until the next frame slot; returns how late (ms) this slot is being served."""
        due = self.start + self.index * self.frame_ms / 1000.0
        self.index += 1
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        return (time.monotonic() - due) * 1000.0
