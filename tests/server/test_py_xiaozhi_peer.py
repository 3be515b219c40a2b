"""Opt-in: py-xiaozhi's MQTT + UDP client (a third-party implementation of the device side) against our server.

py-xiaozhi (github.com/huangjunsen0406/py-xiaozhi, MIT) is never vendored and nothing downloads it at test
time: set ``XZBUILD_PY_XIAOZHI`` to a checkout (its ``src/`` package), otherwise the test skips saying so.
Its ``MqttProtocol`` reads the OTA reply's ``mqtt`` section from its config manager; the driver hands it
the section our server returned, then does one dialogue: connect (MQTT + hello + UDP), ``listen start``,
encrypted uplink Opus, and waits for our ``tts stop`` and downlink audio, then says goodbye.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hil.server import ServerThread

CHECKOUT = os.environ.get("XZBUILD_PY_XIAOZHI", "")
pytestmark = pytest.mark.skipif(
    not (CHECKOUT and (Path(CHECKOUT) / "src" / "protocols" / "mqtt_protocol.py").is_file()),
    reason="set XZBUILD_PY_XIAOZHI to a py-xiaozhi checkout (github.com/huangjunsen0406/py-xiaozhi) to run this")

DRIVER = textwrap.dedent('''
    import asyncio, json, sys, time
    from src.protocols import mqtt_protocol
    from src.constants.constants import AudioConfig, ListeningMode
    from hil.protocol.opus import tone_frames

    section = json.loads(sys.argv[1])

    class Config:
        def get_config(self, path, default=None):
            return section if path == "SYSTEM_OPTIONS.NETWORK.MQTT_INFO" else default

    mqtt_protocol.get_config = lambda: Config()

    async def main():
        proto = mqtt_protocol.MqttProtocol(asyncio.get_running_loop())
        texts, audio = [], []
        proto.on_incoming_json(lambda msg: texts.append(msg))
        proto.on_incoming_audio(lambda data: audio.append(data))
        ok = await proto.connect()
        out = {"connected": bool(ok), "session_id": proto.session_id, "frame_ms": AudioConfig.FRAME_DURATION}
        if ok:
            await proto.send_start_listening(ListeningMode.AUTO_STOP)
            for frame in tone_frames(1.0, 16000, AudioConfig.FRAME_DURATION):
                await proto.send_audio(frame)
                await asyncio.sleep(AudioConfig.FRAME_DURATION / 1000)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not any(
                    m.get("type") == "tts" and m.get("state") == "stop" for m in texts):
                await asyncio.sleep(0.1)
            out["types"] = [m.get("type") + ":" + str(m.get("state", "")) for m in texts]
            out["downlink_frames"] = len(audio)
            await proto.close_audio_channel()
            await asyncio.sleep(0.5)
        print("RESULT " + json.dumps(out))
        import os
        os._exit(0)  # its paho network thread and monitors would keep the process alive

    asyncio.run(main())
''')


def test_py_xiaozhi_client_completes_a_dialogue(tmp_path: Path) -> None:
    import asyncio

    import aiohttp

    from hil.server.probe import ProbeDevice

    mac = "02:00:00:00:99:01"
    scenario = {"devices": {"default": {"ota": "mqtt", "mcp": {"enabled": False},
                                        "turns": [{"audio": "tone", "after_audio_s": 0.5, "sentences": ["Hello."]}]}}}
    with ServerThread(scenario=scenario) as srv:
        async def ota() -> dict[str, object]:
            async with aiohttp.ClientSession() as http:
                status, reply = await ProbeDevice(mac).ota_check(http, srv.ota_url)
            assert status == 200
            return dict(reply["mqtt"])

        section = asyncio.run(ota())
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([CHECKOUT, str(Path(__file__).resolve().parents[2])]),
               "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
        proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(section)], cwd=CHECKOUT, env=env,
                              capture_output=True, text=True, timeout=90, check=False)
        lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
        assert lines, proc.stdout[-2000:] + proc.stderr[-3000:]
        result = json.loads(lines[-1].removeprefix("RESULT "))
        records = srv.transcript(mac)
    assert result["connected"], result
    assert "tts:stop" in result["types"] and "stt:" in result["types"], result
    assert result["downlink_frames"] > 0, result
    hello = next(r for r in records if r["type"] == "hello" and r["dir"] == "rx")
    assert hello["json"]["transport"] == "udp"
    assert [r for r in records if r["kind"] == "udp" and r["dir"] == "rx" and r["type"] == "audio"]
    assert not [r for r in records if r["type"] == "udp_dropped"], [r for r in records if r["type"] == "udp_dropped"][:3]
    assert [r for r in records if r["type"] == "goodbye" and r["dir"] == "rx"]
