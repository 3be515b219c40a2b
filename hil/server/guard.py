"""Protection against floods on shared lab networks: per-peer request rates, rate-limited warnings, and
file-descriptor headroom (each WebSocket session holds a socket, and its transcript a file while open)."""

from __future__ import annotations

import logging
import os
import resource
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from hil.server.security import is_loopback

log = logging.getLogger("hil.server")

FDS_PER_SESSION = 2  # the socket and the transcript file
FD_RESERVE = 64  # listening socket, the loop's own descriptors, logs, firmware files being served


class RateLimitedLog:
    """At most ``burst`` warnings per ``period_s``; the rest are counted and summarised in one line."""

    def __init__(self, burst: int = 20, period_s: float = 10.0) -> None:
        self.burst = burst
        self.period_s = period_s
        self._window = 0.0
        self._sent = 0
        self.suppressed = 0

    def warn(self, fmt: str, *args: Any) -> None:
        """``log.warning(fmt, *args)`` unless this window's budget is spent."""
        now = time.monotonic()
        if now - self._window >= self.period_s:
            if self.suppressed:
                log.warning("%d similar warnings suppressed in the last %.0f s", self.suppressed, self.period_s)
            self._window, self._sent, self.suppressed = now, 0, 0
        if self._sent < self.burst:
            self._sent += 1
            log.warning(fmt, *args)
        else:
            self.suppressed += 1


WARNINGS = RateLimitedLog()

# aiohttp's own request-line and header-field bounds, stated here so docs/limits.md and the server agree.
MAX_REQUEST_LINE = 8190
MAX_HEADER_FIELD = 8190
MAX_HEADERS = 128


class ProtocolErrorLog:
    """The logger aiohttp's request handler writes to: a request it cannot parse (a 9 KB ``Device-Id``, a bad
    request line) is answered 400 by aiohttp and logged here as one rate-limited line instead of a traceback
    per request; every other message goes to aiohttp's server logger unchanged."""

    def __init__(self) -> None:
        self._inner = logging.getLogger("aiohttp.server")

    def exception(self, msg: str, *args: Any, exc_info: Any = None, **kw: Any) -> None:
        from aiohttp.http_exceptions import HttpProcessingError

        if isinstance(exc_info, HttpProcessingError):
            peer = args[0] if args else "?"
            WARNINGS.warn("bad HTTP request from %s answered %s: %s", peer, exc_info.code or 400,
                          str(exc_info.message or exc_info).splitlines()[0][:120])
            return
        self._inner.exception(msg, *args, exc_info=exc_info or True, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class PeerRateLimiter:
    """Token bucket per remote address: ``rate_per_s`` sustained, ``burst`` at once. Remembers at most
    ``max_peers`` addresses (least recently seen forgotten first), so spoofed floods cannot grow it."""

    def __init__(self, rate_per_s: float, burst: int, max_peers: int = 4096) -> None:
        self.rate = rate_per_s
        self.burst = float(burst)
        self.max_peers = max_peers
        self._peers: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self.refused = 0

    def allow(self, peer: str, now: float | None = None) -> bool:
        """Take one token for ``peer``; False when its bucket is empty."""
        now = time.monotonic() if now is None else now
        tokens, last = self._peers.pop(peer, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        ok = tokens >= 1.0
        self._peers[peer] = (tokens - 1.0 if ok else tokens, now)
        while len(self._peers) > self.max_peers:
            self._peers.popitem(last=False)
        if not ok:
            self.refused += 1
        return ok


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def rate_limit_middleware(limiter: PeerRateLimiter, include_loopback: bool) -> Any:
    """aiohttp middleware answering 429 (with Retry-After) to a peer over its request rate. Loopback peers
    (benches, the local HIL suite) are exempt unless ``include_loopback``."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        peer = request.remote or "?"
        if (include_loopback or not is_loopback(peer)) and not limiter.allow(peer):
            WARNINGS.warn("peer %s is over %.0f requests/s; answering 429", peer, limiter.rate)
            return web.Response(status=429, text="too many requests", headers={"Retry-After": "1"})
        return await handler(request)

    return middleware


def open_descriptors() -> int | None:
    """Descriptors this process holds (Linux /proc), or None where that cannot be read."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return None


def descriptor_budget() -> tuple[int, int]:
    """(soft RLIMIT_NOFILE, sessions it supports at ``FDS_PER_SESSION`` each after ``FD_RESERVE``)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft, max(0, (soft - FD_RESERVE) // FDS_PER_SESSION)


class DescriptorWatch:
    """Warns (rate-limited) when the process nears its descriptor limit: past it, the kernel refuses new
    connections (``accept`` fails with EMFILE) and transcript files cannot be opened."""

    def __init__(self, threshold: float = 0.9, period_s: float = 5.0) -> None:
        self.threshold = threshold
        self.period_s = period_s
        self._last = 0.0
        self.log = RateLimitedLog(burst=1, period_s=60.0)

    def check(self, now: float | None = None) -> None:
        """Look at the descriptor count at most every ``period_s``."""
        now = time.monotonic() if now is None else now
        if now - self._last < self.period_s:
            return
        self._last = now
        used = open_descriptors()
        soft, sessions = descriptor_budget()
        if used is not None and used >= self.threshold * soft:
            self.log.warn("%d of %d file descriptors in use: new connections will be refused (EMFILE) beyond "
                          "the limit; raise it with `ulimit -n` (about %d sessions fit now)", used, soft, sessions)
