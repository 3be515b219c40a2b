"""``rfc2217://`` handler: the fast client for a virtual board's port, pyserial's own for every other."""

from hil.vboard.fastserial import serial_class_for_url

__all__ = ["serial_class_for_url"]
