"""Token auth decision (loopback vs not), the WebSocket handler with a non-loopback peer, and wss/https."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from hil.server import ReferenceServer
from hil.server.probe import ProbeDevice
from hil.server.security import check_authorization, client_ssl_context, is_loopback, token_matches

OUTSIDE = "203.0.113.7"  # TEST-NET-3: never routed, used only as the claimed peer address


@pytest.mark.parametrize(
    ("addr", "loop"),
    [("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("::ffff:127.0.0.1", True), ("10.0.0.1", False),
     ("::ffff:10.0.0.1", False), ("fe80::1%eth0", False), ("", False), (None, False), ("garbage", False)],
)
def test_is_loopback(addr: str | None, loop: bool) -> None:
    assert is_loopback(addr) is loop


@pytest.mark.parametrize(
    ("remote", "header", "token", "mode", "allowed"),
    [
        ("127.0.0.1", None, None, "auto", True),
        ("::1", None, "t0k", "auto", True),
        ("127.0.0.1", None, "t0k", "always", False),
        ("127.0.0.1", "Bearer t0k", "t0k", "always", True),
        (OUTSIDE, None, None, "auto", False),
        (OUTSIDE, "Bearer t0k", None, "auto", False),
        (OUTSIDE, None, "t0k", "auto", False),
        (OUTSIDE, "Bearer wrong", "t0k", "auto", False),
        (OUTSIDE, "t0k", "t0k", "auto", False),  # a token without a space is always sent with "Bearer "
        (OUTSIDE, "Bearer t0k", "t0k", "auto", True),
        (OUTSIDE, "Custom abc", "Custom abc", "auto", True),  # a token with a space is sent verbatim
        (None, "Bearer t0k", "t0k", "auto", True),
        (None, None, "t0k", "auto", False),
    ],
)
def test_auth_decision(remote: str | None, header: str | None, token: str | None, mode: str, allowed: bool) -> None:
    decision = check_authorization(remote, header, token, mode)
    assert decision.allowed is allowed and decision.reason


def test_token_matches_is_exact() -> None:
    assert token_matches("Bearer abc", "abc")
    assert not token_matches("Bearer abcd", "abc")
    assert not token_matches("bearer abc", "abc")
    assert not token_matches("Bearer abc", "")


@web.middleware
async def pretend_outside(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    return await handler(request.clone(remote=OUTSIDE))


async def outside_attempts() -> tuple[list[int], dict[str, Any], list[dict[str, Any]]]:
    srv = ReferenceServer(token="s3cret")
    app = srv.build_app()
    app.middlewares.append(pretend_outside)  # the real handler sees a non-loopback peer
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    url = f"ws://127.0.0.1:{port}/xiaozhi/v1/"
    mac = "aa:bb:cc:00:00:20"
    statuses = []
    try:
        async with aiohttp.ClientSession() as http:
            for token in (None, "wrong"):
                try:
                    await ProbeDevice(mac, token=token).connect(http, url)
                    statuses.append(101)
                except aiohttp.WSServerHandshakeError as exc:
                    statuses.append(exc.status)
            probe = ProbeDevice(mac, token="s3cret")
            await probe.connect(http, url)
            statuses.append(101)
            await probe.close()
        return statuses, probe.server_hello, srv.transcript(mac)
    finally:
        await runner.cleanup()


def test_off_loopback_without_valid_token_is_refused(run: Any) -> None:
    statuses, hello, records = run(outside_attempts())
    assert statuses == [401, 401, 101]
    assert hello["type"] == "hello" and hello["transport"] == "websocket"
    handshakes = [r for r in records if r["type"] == "handshake"]
    assert [h["remote"] for h in handshakes] == [OUTSIDE] * 3
    assert [h["token_ok"] for h in handshakes] == [False, False, True]
    refusals = [r["reason"] for r in records if r["type"] == "error"]
    assert "no Authorization header" in refusals[0] and "wrong token" in refusals[1]
    assert handshakes[2]["decision"] == "valid token"


def test_wss_and_https_with_generated_certificate(run: Any) -> None:
    async def go() -> tuple[str, dict[str, Any], bool]:
        mac = "aa:bb:cc:00:00:21"
        async with ReferenceServer(tls_self_signed=True, scenario={"devices": {"default": {"protocol_version": 2}}}) as srv:
            assert srv.tls_cert_path is not None and srv.ota_url.startswith("https://")
            ctx = client_ssl_context(srv.tls_cert_path)
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as http:
                probe = ProbeDevice(mac)
                status, reply = await probe.ota_check(http, srv.ota_url)
                assert status == 200
                probe.version = reply["websocket"]["version"]
                await probe.connect(http, reply["websocket"]["url"])
                await probe.close()
            untrusted = False
            async with aiohttp.ClientSession() as http:  # default trust store: the self-signed cert is rejected
                try:
                    await ProbeDevice(mac).ota_check(http, srv.ota_url)
                except aiohttp.ClientConnectorCertificateError:
                    untrusted = True
            return reply["websocket"]["url"], probe.server_hello, untrusted

    url, hello, untrusted = run(go())
    assert url.startswith("wss://127.0.0.1:")
    assert hello["transport"] == "websocket"
    assert untrusted
