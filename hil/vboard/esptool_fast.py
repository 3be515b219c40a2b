"""``python -m hil.vboard.esptool_fast <esptool args>``: esptool itself, with the fast RFC2217 client.

The stock pyserial RFC2217 client renegotiates the port on every esptool command (~0.2 s each), so a
write-flash over ``rfc2217://`` takes ~30 s even for small images; this entry point installs
:mod:`hil.vboard.fastserial` first and then runs esptool's unmodified command line.
"""

from __future__ import annotations

from hil.vboard import fastserial


def main() -> None:
    """Run esptool's CLI (arguments from ``sys.argv``) with the fast ``rfc2217://`` handler installed."""
    import esptool

    fastserial.install()
    fastserial.quiet_esptool_trace()
    esptool._main()


if __name__ == "__main__":
    main()
