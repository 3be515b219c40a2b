"""What a Kconfig text means, as ESP-IDF reads it: esp-idf-kconfig's own parser (``esp_kconfiglib``).

The symbols a text declares, and the line of each one's first definition, come from the parser ESP-IDF
builds with, so they agree with what a build sees (``config X`` inside help text is not a declaration,
``config X # note`` is). The evaluator of ``xzbuild.codegen.kconfig_check`` loads its Kconfig through
:func:`load_file` too. How an entry is *written* is layout: ``xzbuild.core.kconfig_text``.

Tolerance: esp-idf-kconfig refuses texts that today's callers must still read (a partial Kconfig, an upstream
revision with a syntax slip, a ``source`` of a file not in the tree). For those, :func:`declared` falls back
to the layout reader, which takes every ``config``/``menuconfig`` head as written.

Loading esp-idf-kconfig and parsing a revision costs about 0.1 s, so it is asked only where Kconfig is
evaluated anyway (PR mode's config-change classes, the build preflight); a parse is memoised by text.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from xzbuild.core import kconfig_text


class _LiveStderr:
    """A file-like object that writes to whatever ``sys.stderr`` is at the time of the write."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence esp-idf-kconfig's NOTE lines (choice symbols set to n); callers report what matters.

    The logger is esp-pylib's process-wide instance, which building a Kconfig swaps for esp-idf-kconfig's
    caching logger: the instance silenced here is the one restored, and it is put back in place (esptool in
    the same process prints through it)."""
    from esp_pylib.logger import EspLog

    instance = EspLog.instance
    before = getattr(instance, "_verbosity", 1)
    if instance is not None:
        instance.set_verbosity(0)
    try:
        yield
    finally:
        if instance is not None:
            instance.set_verbosity(before)
            EspLog.set_logger(instance)


def load_file(top: Path) -> Any:
    """``esp_kconfiglib.Kconfig`` of the file ``top``, quietly (raises what esp-idf-kconfig raises)."""
    import esp_kconfiglib
    from esp_pylib.logger import log

    # esp_kconfiglib pins esp_pylib's note stream to the sys.stderr of its import time; follow the live
    # one instead, so notes never go to a stream that was replaced and closed since (redirects, capture).
    log.set_info_stream(_LiveStderr())
    with quiet():  # style notes about the firmware's own Kconfig are not ours to print
        return esp_kconfiglib.Kconfig(str(top), warn=False)


@functools.lru_cache(maxsize=8)
def _parse(text: str) -> Any | None:
    """The parsed text, or None where esp-idf-kconfig refuses it (the callers fall back to the layout)."""
    with tempfile.TemporaryDirectory(prefix="xzbuild-kconfig-") as tmp:
        top = Path(tmp) / "Kconfig"
        top.write_text(text, encoding="utf-8")
        try:
            return load_file(top)
        except Exception:  # noqa: BLE001 - any refusal (KconfigError, a missing `source`, ...) means "fall back"
            return None


@functools.lru_cache(maxsize=8)
def declared(text: str) -> dict[str, int]:
    """Symbol → 1-based line of its first definition, in file order: what esp-idf-kconfig declares, or what
    the layout declares where it refuses the text."""
    kconf = _parse(text)
    if kconf is None:
        return kconfig_text.declarations(text)
    from esp_kconfiglib import core

    found: dict[str, int] = {}
    for node in kconf.node_iter():
        if isinstance(node.item, core.Symbol):  # not menus, comments or the choices themselves
            found.setdefault(node.item.name, node.linenr)
    return dict(sorted(found.items(), key=lambda kv: kv[1]))
