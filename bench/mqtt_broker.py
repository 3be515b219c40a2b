"""Broker bench: start time, publish throughput and request/response latency of the MQTT brokers we could embed.

Candidates (specs/real-components.md): Debian's ``mosquitto`` 2.0 (child process, how the reference
server runs it, dynamic-security plugin included) and PyPI ``amqtt`` (its own ``amqtt`` broker CLI as a
child process, anonymous; measured only when installed: ``pip install amqtt==0.12.1``). Start time is
process start until the port accepts connections (for mosquitto without writing its credential pool). The same aiomqtt
clients drive both: one publisher streaming QoS 0 messages of 200 bytes to one subscriber (messages per
second), and 300 ping-pongs through the broker (p50/p99 round trip, the shape of a hello exchange).
Prints a ratio amqtt/mosquitto for each figure.

    .venv/bin/python bench/mqtt_broker.py [--messages 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiomqtt

from hil.server.mqtt_broker import MosquittoBroker
from hil.server.transcript import percentile


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.005)
    raise RuntimeError(f"nothing listens on {port}")


@contextlib.contextmanager
def mosquitto() -> Iterator[tuple[int, str, str, float]]:
    broker = MosquittoBroker("127.0.0.1")
    addr = broker.start()
    try:
        yield addr.port, addr.username, addr.password, broker.process_seconds
    finally:
        broker.stop()


@contextlib.contextmanager
def amqtt() -> Iterator[tuple[int, str, str, float]]:
    exe = shutil.which("amqtt") or str(Path(sys.executable).with_name("amqtt"))
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "broker.yaml"
        conf.write_text(f"listeners:\n  default:\n    type: tcp\n    bind: 127.0.0.1:{port}\nplugins:\n"
                        "  amqtt.plugins.authentication.AnonymousAuthPlugin:\n    allow_anonymous: true\n")
        t0 = time.monotonic()
        proc = subprocess.Popen([exe, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_port(port)
            yield port, "", "", time.monotonic() - t0
        finally:
            proc.terminate()
            proc.wait(10)


async def throughput(port: int, user: str, password: str, count: int) -> float:
    """Messages per second from one publisher to one subscriber (QoS 0, 200 bytes)."""
    kw: dict[str, Any] = {"username": user or None, "password": password or None}
    async with aiomqtt.Client("127.0.0.1", port, **kw) as sub, aiomqtt.Client("127.0.0.1", port, **kw) as pub:
        await sub.subscribe("xiaozhi/bench/down")
        await asyncio.sleep(0.2)
        got = 0
        done = asyncio.Event()

        async def reader() -> None:
            nonlocal got
            async for _m in sub.messages:
                got += 1
                if got >= count:
                    done.set()
                    return

        task = asyncio.ensure_future(reader())
        payload = b"x" * 200
        t0 = time.monotonic()
        for start in range(0, count, 200):  # 200 publishes in flight: measure the broker, not one await each
            await asyncio.gather(*(pub.publish("xiaozhi/bench/down", payload) for _ in range(min(200, count - start))))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), 60)
        elapsed = time.monotonic() - t0
        task.cancel()
        return got / elapsed


async def ping_pong(port: int, user: str, password: str, rounds: int) -> list[float]:
    """Round trips (ms) of request → responder → reply through the broker."""
    kw: dict[str, Any] = {"username": user or None, "password": password or None}
    async with aiomqtt.Client("127.0.0.1", port, **kw) as dev, aiomqtt.Client("127.0.0.1", port, **kw) as srv:
        await dev.subscribe("xiaozhi/bench/down")
        await srv.subscribe("xiaozhi/bench/up")
        await asyncio.sleep(0.2)

        async def responder() -> None:
            async for m in srv.messages:
                await srv.publish("xiaozhi/bench/down", m.payload)

        task = asyncio.ensure_future(responder())
        rtts = []
        messages = dev.messages
        for i in range(rounds):
            t0 = time.monotonic()
            await dev.publish("xiaozhi/bench/up", str(i).encode())
            await anext(messages)
            rtts.append((time.monotonic() - t0) * 1000)
        task.cancel()
        return rtts


def measure(name: str, broker: Any, count: int) -> dict[str, Any]:
    with broker() as (port, user, password, start_s):
        rate = asyncio.run(throughput(port, user, password, count))
        rtts = asyncio.run(ping_pong(port, user, password, 300))
    return {"broker": name, "start_ms": round(start_s * 1000, 1), "msgs_per_s": round(rate),
            "rtt_p50_ms": round(percentile(rtts, 50), 3), "rtt_p99_ms": round(percentile(rtts, 99), 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=20000)
    a = ap.parse_args()
    print(f"loadavg before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    rows = [measure("mosquitto", mosquitto, a.messages)]
    has_amqtt = shutil.which("amqtt") or Path(sys.executable).with_name("amqtt").exists()
    if has_amqtt:
        rows.append(measure("amqtt", amqtt, a.messages))
    else:
        print("amqtt not installed (pip install amqtt==0.12.1) - measuring mosquitto only")
    for r in rows:
        print(f"{r['broker']:<10} start {r['start_ms']:8.1f} ms  {r['msgs_per_s']:8d} msg/s  "
              f"round trip p50 {r['rtt_p50_ms']:7.2f} ms  p99 {r['rtt_p99_ms']:7.2f} ms")
    if len(rows) == 2:
        m, q = rows
        print(f"ratio amqtt/mosquitto: start {q['start_ms'] / m['start_ms']:.2f}, throughput "
              f"{q['msgs_per_s'] / m['msgs_per_s']:.2f}, round trip p99 {q['rtt_p99_ms'] / m['rtt_p99_ms']:.2f}")
    print(f"loadavg after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
