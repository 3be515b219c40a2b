"""``python -m hil.vboard.esptool_fast <esptool args>``: esptool itself, with the fast RFC2217 client.

The stock pyserial RFC2217 client renegotiates the port on every esptool command (~0.2 s each), so a
write-flash over ``rfc2217://`` takes ~30 s even for small images. This entry point is for a virtual
board's port (``xzbuild vboard``): it marks the ``--port`` URL for :mod:`hil.vboard.fastserial` and then
runs esptool's unmodified command line. Any other port is opened by stock pyserial.
"""

from __future__ import annotations

import contextlib
import os
import sys

from hil.vboard import fastserial


def port_argument(argv: list[str]) -> str | None:
    """The port esptool will open: ``--port``/``-p`` in ``argv``, else ``$ESPPORT`` (as esptool reads it)."""
    for index, arg in enumerate(argv):
        if arg in ("--port", "-p") and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--port="):
            return arg.split("=", 1)[1]
    return os.environ.get("ESPPORT")


def main() -> None:
    """Run esptool's CLI (arguments from ``sys.argv``), its ``rfc2217://`` port opened by the fast client."""
    import esptool

    port = port_argument(sys.argv[1:])
    if port and port.startswith("rfc2217://"):
        with contextlib.suppress(ValueError):  # no host:port: esptool reports the URL itself
            fastserial.mark_virtual(port)
    fastserial.quiet_esptool_trace()
    esptool._main()


if __name__ == "__main__":
    main()
