"""Starting and stopping the MQTT + UDP side of the reference server (broker, gateway, UDP endpoint)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hil.server.context import ServerContext
from hil.server.scenario import OTA_PRESETS, Scenario

MODES = ("auto", "embedded", "off")


def hands_out_mqtt(scenario: Scenario) -> bool:
    """Does any profile's OTA preset carry an ``mqtt`` section?"""
    return any("mqtt" in OTA_PRESETS[p.ota][0] for p in (scenario.default, *scenario.devices.values()))


def wanted(mode: str, scenario: Scenario) -> bool:
    """Whether to run the MQTT side: always for ``embedded`` or a URL, never for ``off``, else by scenario."""
    if mode == "off":
        return False
    return mode != "auto" or hands_out_mqtt(scenario)


async def start(ctx: ServerContext, sessions: set[Any], host: str, mode: str, tls_cert: Path | None,
                tls_key: Path | None) -> tuple[Any, Any]:
    """(gateway, embedded broker or None): the broker is ours unless ``mode`` is a broker URL."""
    from hil.server.mqtt_broker import MosquittoBroker
    from hil.server.mqtt_gateway import MqttGateway, parse_broker_url

    broker = None
    if mode in MODES:
        broker = MosquittoBroker(host, tls_cert=tls_cert if ctx.tls else None, tls_key=tls_key if ctx.tls else None,
                                 max_message=ctx.limits.max_frame_bytes)
        address = await asyncio.to_thread(broker.start)
    else:
        address = parse_broker_url(mode)
    gateway = MqttGateway(ctx, sessions, address, host, embedded=broker,
                          tls_ca=str(tls_cert) if tls_cert is not None else None)
    try:
        await gateway.start()
    except BaseException:
        if broker is not None:
            await asyncio.to_thread(broker.stop)
        raise
    return gateway, broker


async def stop(gateway: Any, broker: Any) -> None:
    """Stop the gateway, then the embedded broker (even if the gateway's stop failed)."""
    try:
        if gateway is not None:
            await gateway.stop()
    finally:
        if broker is not None:
            await asyncio.to_thread(broker.stop)
