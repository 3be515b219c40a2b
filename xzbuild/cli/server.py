"""`xzbuild server`: run the reference OTA + WebSocket + MCP server for boards under test."""

from __future__ import annotations

from pathlib import Path

import click

from xzbuild.cli._params import Bounded

# Every numeric option has bounds: 0 or a negative size would switch a limit off, nan/inf are no duration.
_BYTES = (1024, 16 * 1024 * 1024)  # a device's largest frame or body is a few KiB (an MCP reply, an OTA check)
_IDLE = (1.0, 86400.0)


@click.command("server")
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address.")
@click.option("--port", default=8002, show_default=True, type=click.IntRange(0, 65535), help="Port (0 = any free).")
@click.option("--token", default=None, help="WebSocket token (handed out in OTA replies); needed off-loopback.")
@click.option("--auth", type=click.Choice(["auto", "always"]), default="auto", show_default=True,
              help="auto: loopback clients need no token; always: every client must present it.")
@click.option("--scenario", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Scenario YAML/JSON (OTA preset, dialogue, MCP script per device id).")
@click.option("--transcripts", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for one JSONL transcript per connection.")
@click.option("--firmware-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory served at GET /fw/<file> (overrides the scenario's firmware_dir).")
@click.option("--tls-cert", type=click.Path(dir_okay=False, path_type=Path), default=None, help="PEM certificate.")
@click.option("--tls-key", type=click.Path(dir_okay=False, path_type=Path), default=None, help="PEM private key.")
@click.option("--tls-self-signed", is_flag=True, help="Serve https/wss with a generated self-signed certificate.")
@click.option("--idle-timeout", type=Bounded(float, *_IDLE, "seconds"), default=300.0, show_default=True,
              help=f"Close silent WebSockets (s, {_IDLE[0]:g} to {_IDLE[1]:g}).")
@click.option("--max-frame", type=Bounded(int, *_BYTES, "bytes"), default=64 * 1024, show_default=True,
              help=f"Largest WebSocket frame (bytes, {_BYTES[0]} to {_BYTES[1]}).")
@click.option("--max-body", type=Bounded(int, *_BYTES, "bytes"), default=64 * 1024, show_default=True,
              help=f"Largest HTTP body (bytes, {_BYTES[0]} to {_BYTES[1]}).")
@click.option("--transport", type=click.Choice(["websocket", "mqtt", "both"]), default=None,
              help="OTA reply for devices without their own scenario entry: websocket, mqtt (MQTT + UDP), or both "
                   "sections (the firmware then picks MQTT). Default: the scenario's, else websocket.")
@click.option("--mqtt-broker", default=None, metavar="URL",
              help="Use this broker (mqtt[s]://user:password@host:port) instead of the embedded mosquitto.")
@click.option("-v", "--verbose", is_flag=True, help="Log every refused or closed connection.")
def server(host: str, port: int, token: str | None, auth: str, scenario: Path | None, transcripts: Path | None,
           firmware_dir: Path | None, tls_cert: Path | None, tls_key: Path | None, tls_self_signed: bool,
           idle_timeout: float, max_frame: int, max_body: int, transport: str | None, mqtt_broker: str | None,
           verbose: bool) -> None:
    """Reference server: OTA/activation HTTP, WebSocket audio channel and MCP client for real or virtual boards.

    Point a lab build at it with CONFIG_OTA_URL="http://<this host>:<port>/xiaozhi/ota/".
    """
    import asyncio
    import gc
    import logging
    import signal

    from xzbuild.core.errors import Location, UserError

    if (tls_cert is None) != (tls_key is None):
        raise UserError("--tls-cert and --tls-key go together; pass both, or use --tls-self-signed")
    if tls_cert is not None and tls_self_signed:
        raise UserError("--tls-self-signed conflicts with --tls-cert; pass one of them")
    for path in (tls_cert, tls_key):
        if path is not None and not path.is_file():
            raise UserError("file not found; pass an existing PEM file", Location(str(path)))
    if firmware_dir is not None and not firmware_dir.is_dir():
        raise UserError("firmware directory not found; create it or fix --firmware-dir", Location(str(firmware_dir)))

    from hil.server import Limits, ReferenceServer, load_scenario
    from hil.server.app import new_event_loop
    from hil.server.security import is_loopback

    loaded = load_scenario(scenario) if scenario is not None else None
    if transport is not None:
        import dataclasses

        from hil.server import Scenario

        base = loaded or Scenario()
        loaded = dataclasses.replace(base, default=dataclasses.replace(base.default, ota=transport))
    if mqtt_broker is not None:
        from hil.server.mqtt_gateway import parse_broker_url

        parse_broker_url(mqtt_broker)  # a bad URL is a one-line error before anything starts
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(message)s")
    if not is_loopback(host) and host not in ("localhost",) and not token:
        click.echo(f"warning: bound to {host} without --token: every non-loopback device will be refused", err=True)
    limits = Limits(max_body_bytes=max_body, max_frame_bytes=max_frame, idle_timeout_s=idle_timeout)
    srv = ReferenceServer(host, port, loaded, transcripts, token=token, auth=auth, tls_cert=tls_cert, tls_key=tls_key,
                          tls_self_signed=tls_self_signed, firmware_dir=firmware_dir, limits=limits, tune_gc=True,
                          mqtt=mqtt_broker or "auto")

    async def serve() -> None:
        try:
            await srv.start()
        except OSError as exc:
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror}; pick another --port") from None
        gc.freeze()  # start-up objects live forever: keep GC pauses out of audio pacing
        stop = asyncio.Event()
        # SIGTERM (e.g. from a CI runner) stops cleanly so open transcripts are finished (and the broker
        # child ends); installed before the banner, which callers take as "ready"
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        click.echo(f"reference server: OTA {srv.ota_url}  WebSocket {srv.ws_url}"
                   + (f"  MQTT {srv.mqtt_url}  UDP {srv.ctx.mqtt.udp.port}" if srv.mqtt_url else ""))
        if srv.tls_cert_path is not None:
            click.echo(f"TLS certificate: {srv.tls_cert_path}")
        if transcripts is not None:
            click.echo(f"transcripts: {transcripts}")
        try:
            await stop.wait()
        finally:
            await srv.stop()

    try:
        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            runner.run(serve())
    except KeyboardInterrupt:
        click.echo("stopped")


COMMANDS = [server]
