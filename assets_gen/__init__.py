"""Firmware-compatible asset bundles: container, srmodels, emoji, backgrounds, fonts, per-variant bundles.

The pipeline is ``inputs -> members (name, bytes) -> container``; every stage validates its input and the
result is re-read with the same checks the firmware applies (see :mod:`assets_gen.inspect`).
"""
