"""Glyph push: the firmware's acceptance rules, and the server attaching glyphs from the hello's capability."""

from __future__ import annotations

import copy
from typing import Any

import aiohttp
import pytest

from hil.protocol import glyphs, messages
from hil.protocol.opus import tone_frames
from hil.server import ReferenceServer
from hil.server.probe import ProbeDevice

FONT = {"bundle": "noto-v1", "charset": "basic", "size": 14, "bpp": 4}
BIG = glyphs.base64.b64encode(b"\xff" * glyphs.bitmap_size(64, 64, 4)).decode()  # a valid 64×64 bitmap


def test_sample_payload_is_accepted() -> None:
    payload = glyphs.payload_for_text(FONT, "你好 ok")
    glyphs.validate_glyph_payload(payload, FONT)
    assert [g["codepoint"] for g in payload["glyphs"]] == [0x4F60, 0x597D]
    g = payload["glyphs"][0]
    assert len(glyphs.base64.b64decode(g["bitmap"])) == glyphs.bitmap_size(g["box_w"], g["box_h"], 4)


@pytest.mark.parametrize(
    ("mutate", "why"),
    [
        (lambda p: p.update(v=2), "incompatible"),
        (lambda p: p.update(bundle="other"), "incompatible"),
        (lambda p: p.update(size=16), "incompatible"),
        (lambda p: p.update(bpp=2), "incompatible"),
        (lambda p: p.update(glyphs=p["glyphs"] * 65), "incompatible"),
        (lambda p: p["glyphs"][0].update(codepoint=0), "malformed"),
        (lambda p: p["glyphs"][0].update(codepoint=0x110000), "malformed"),
        (lambda p: p["glyphs"][0].update(box_w=65), "malformed"),
        (lambda p: p["glyphs"][0].update(ofs_y=40000), "malformed"),
        (lambda p: p["glyphs"][0].update(bitmap=None), "malformed"),
        (lambda p: p["glyphs"][0].update(bitmap="AAAA"), "invalid bitmap"),
        (lambda p: p["glyphs"][0].update(bitmap="A" * 100), "oversized base64"),
        (lambda p: p["glyphs"][0].update(box_w=0, box_h=0), "oversized base64"),  # size is checked first
        (lambda p: p["glyphs"][0].update(box_w=0, box_h=0, bitmap="AA=="), "invalid bitmap"),
        (lambda p: p.update(glyphs=[dict(p["glyphs"][0], box_w=64, box_h=64, bitmap=BIG)] * 40), "oversized glyph payload"),
    ],
)
def test_violations_are_rejected_like_the_firmware(mutate: Any, why: str) -> None:
    payload = copy.deepcopy(glyphs.payload_for_text(FONT, "中"))
    mutate(payload)
    with pytest.raises(messages.ProtocolError, match=why):
        glyphs.validate_glyph_payload(payload, FONT)


def test_no_capability_rejects_everything() -> None:
    with pytest.raises(messages.ProtocolError, match="incompatible"):
        glyphs.validate_glyph_payload(glyphs.payload_for_text(FONT, "中"), None)
    assert glyphs.usable_capability(False, FONT) is None
    assert glyphs.usable_capability(True, {**FONT, "bpp": 3}) is None


def test_server_attaches_glyphs_from_the_hello(run: Any) -> None:
    async def go(text_font: dict[str, Any] | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        turns = [{"stt": "你好", "sentences": ["好的。"], "audio": "tone", "after_audio_s": 0.06, "glyph_push": "valid"},
                 {"stt": "再来", "sentences": ["不"], "audio": "tone", "after_audio_s": 0.06, "glyph_push": "invalid"}]
        scen = {"devices": {"default": {"turns": turns, "mcp": {"enabled": False}}}}
        async with ReferenceServer(scenario=scen) as srv, aiohttp.ClientSession() as http:
            probe = ProbeDevice("aa:00:00:00:00:40", text_font=text_font)
            await probe.connect(http, srv.ws_url)
            for _turn in range(2):
                mark = len(probe.texts)
                await probe.send_text(messages.device_listen_start(probe.session_id))
                await probe.send_audio(tone_frames(0.06, 16000))
                await probe.wait_text("tts", state="stop", after=mark, timeout=10)
            await probe.close()
            shown = [t for _, t in probe.texts if t["type"] == "stt" or t.get("state") == "sentence_start"]
            return shown, srv.transcript(probe.mac)

    shown, _ = run(go(FONT))
    assert [("glyph_push" in t) for t in shown] == [True, True, True, True]
    for t in shown[:2]:
        glyphs.validate_glyph_payload(t["glyph_push"], FONT)
    for t in shown[2:]:
        with pytest.raises(messages.ProtocolError):
            glyphs.validate_glyph_payload(t["glyph_push"], FONT)
    shown, records = run(go(None))
    assert not any("glyph_push" in t for t in shown)
    assert any(r["type"] == "glyph_push_skipped" for r in records)
