"""``rfc2217://`` handler: pyserial's RFC2217 client with the in-process speed fixes."""

from hil.vboard.fastserial import FastRFC2217Serial as Serial

__all__ = ["Serial"]
