"""OTA / activation / firmware HTTP of the reference server, per scenario preset."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from hil.server import ReferenceServer
from hil.server.ota_http import resolve_firmware
from hil.server.probe import ProbeDevice

DEV = "aa:bb:cc:00:00:10"


async def ota_reply(preset: str, **extra: Any) -> tuple[int, Any, list[dict[str, Any]]]:
    scen = {"devices": {"default": {"ota": "websocket"}, DEV: {"ota": preset, **extra}}}
    async with ReferenceServer(scenario=scen) as srv, aiohttp.ClientSession() as http:
        status, body = await ProbeDevice(DEV).ota_check(http, srv.ota_url)
        return status, body, srv.transcript(DEV)


@pytest.mark.parametrize(
    ("preset", "status", "sections"),
    [
        ("websocket", 200, {"server_time", "websocket"}),
        ("mqtt", 200, {"server_time", "mqtt"}),
        ("both", 200, {"server_time", "mqtt", "websocket"}),
        ("neither", 200, {"server_time"}),
        ("activation", 200, {"server_time", "websocket", "activation"}),
        ("upgrade", 200, {"server_time", "websocket", "firmware"}),
        ("force_upgrade", 200, {"server_time", "websocket", "firmware"}),
    ],
)
def test_presets_choose_sections(preset: str, status: int, sections: set[str], run: Any) -> None:
    got_status, body, records = run(ota_reply(preset))
    assert got_status == status and set(body) == sections
    if "firmware" in body:
        assert body["firmware"]["version"] == "1.2.1"  # the probe runs 1.2.0; "newer" bumps the last segment
        assert body["firmware"]["url"].endswith(f"/fw/firmware.bin?device={DEV}")
        assert ("force" in body["firmware"]) is (preset == "force_upgrade")
    if "mqtt" in body:
        assert all(len(k) <= 15 for k in body["mqtt"])
    rx = records[0]
    assert rx["dir"] == "rx" and rx["type"] == "ota" and rx["problems"] == []
    assert rx["json"]["mac_address"] == DEV and rx["headers"]["Device-Id"] == DEV
    assert records[1]["status"] == status and records[1]["preset"] == preset


def test_http500_and_malformed(run: Any) -> None:
    status, body, _ = run(ota_reply("http500"))
    assert status == 500
    status, body, records = run(ota_reply("malformed"))
    assert status == 200 and isinstance(body, str) and body.startswith("{")  # not parseable on purpose
    assert records[1]["body"] == body


def test_request_problems_are_recorded_not_fatal(run: Any) -> None:
    async def go() -> list[dict[str, Any]]:
        async with ReferenceServer() as srv, aiohttp.ClientSession() as http:
            probe = ProbeDevice(DEV)
            headers = probe.ota_headers()
            headers["Device-Id"] = DEV.upper()
            headers["User-Agent"] = "no-slash"
            body = probe.system_info().replace('"ssid":"lab"', '"ssid":"la"b"')  # the firmware does not escape
            async with http.post(srv.ota_url, data=body.encode(), headers=headers) as resp:
                assert resp.status == 200
            return srv.transcript("aa:bb:cc:00:00:10")

    rx = run(go())[0]
    assert any("Device-Id" in p for p in rx["problems"])
    assert any("User-Agent" in p for p in rx["problems"])
    assert any("not valid JSON" in p for p in rx["problems"])
    assert "json" not in rx


def test_activation_202_then_200_then_plain_reply(run: Any) -> None:
    async def go() -> tuple[list[int], dict[str, Any], dict[str, Any]]:
        scen = {"devices": {"default": {"ota": "activation", "activation_pending": 2}}}
        async with ReferenceServer(scenario=scen) as srv, aiohttp.ClientSession() as http:
            probe = ProbeDevice(DEV)
            _, first = await probe.ota_check(http, srv.ota_url)
            statuses = []
            for _ in range(3):
                async with http.post(srv.ota_url + "activate", data=b"{}", headers=probe.ota_headers()) as resp:
                    statuses.append(resp.status)
            _, second = await probe.ota_check(http, srv.ota_url)
            return statuses, first, second

    statuses, first, second = run(go())
    assert statuses == [202, 202, 200]
    assert first["activation"]["code"] == "123456" and first["activation"]["challenge"]
    assert "activation" not in second and "websocket" in second


def test_firmware_served_with_length_and_no_traversal(tmp_path: Path, run: Any) -> None:
    fw = tmp_path / "fw"
    fw.mkdir()
    (fw / "firmware.bin").write_bytes(b"\xe9" + b"\x01" * 5000)
    (tmp_path / "secret.txt").write_text("no")

    async def go() -> list[tuple[str, int, int | None]]:
        async with ReferenceServer(scenario={"devices": {"default": {"ota": "upgrade"}}}, firmware_dir=fw) as srv, \
                aiohttp.ClientSession() as http:
            _, body = await ProbeDevice(DEV).ota_check(http, srv.ota_url)
            out = []
            for url in (body["firmware"]["url"], f"{srv.base_url}/fw/..%2fsecret.txt", f"{srv.base_url}/fw/.hidden",
                        f"{srv.base_url}/fw/%2e%2e"):
                async with http.get(url) as resp:
                    data = await resp.read()
                    out.append((url, resp.status, resp.content_length if resp.status == 200 else len(data) * 0))
            transcript = srv.transcript(DEV)
            assert any(r["type"] == "firmware" and r.get("status") == 200 for r in transcript)
            return out

    results = run(go())
    assert results[0][1:] == (200, 5001)
    assert [r[1] for r in results[1:]] == [404, 404, 404]


@pytest.mark.parametrize("name", ["../secret.txt", "..", ".", "", "a/b", "/etc/passwd", "x\x00y", ".hidden", "missing"])
def test_resolve_firmware_refuses(tmp_path: Path, name: str) -> None:
    (tmp_path / "ok.bin").write_bytes(b"x")
    (tmp_path / ".hidden").write_bytes(b"x")
    assert resolve_firmware(tmp_path, name) is None
    assert resolve_firmware(tmp_path, "ok.bin") == (tmp_path / "ok.bin").resolve()
    assert resolve_firmware(None, "ok.bin") is None


def test_body_limit_gives_413(run: Any) -> None:
    async def go() -> int:
        async with ReferenceServer() as srv, aiohttp.ClientSession() as http, \
                http.post(srv.ota_url, data=b"x" * 100_000, headers=ProbeDevice(DEV).ota_headers()) as resp:
            return resp.status

    assert run(go()) == 413


def test_activation_hmac_checked_when_key_known(run: Any) -> None:
    key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

    async def go() -> list[list[str]]:
        scen = {"devices": {"default": {"ota": "activation", "activation_pending": 0, "activation_hmac_key": key}}}
        async with ReferenceServer(scenario=scen) as srv, aiohttp.ClientSession() as http:
            probe = ProbeDevice(DEV)
            _, reply = await probe.ota_check(http, srv.ota_url)
            challenge = reply["activation"]["challenge"]
            good = hmac.new(bytes.fromhex(key), challenge.encode(), hashlib.sha256).hexdigest()
            headers = {**probe.ota_headers(), "Activation-Version": "2", "Serial-Number": "SN123"}
            for mac in (good, "0" * 64):
                body = {"algorithm": "hmac-sha256", "serial_number": "SN123", "challenge": challenge, "hmac": mac}
                async with http.post(srv.ota_url + "activate", json=body, headers=headers) as resp:
                    assert resp.status == 200
            return [r["problems"] for r in srv.transcript(DEV) if r["type"] == "activate" and r["dir"] == "rx"]

    good, bad = run(go())
    assert good == []
    assert bad == ["hmac does not match HMAC-SHA256(key, challenge) for the configured key"]
