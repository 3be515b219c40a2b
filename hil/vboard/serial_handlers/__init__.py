"""pyserial URL handlers registered by :func:`hil.vboard.fastserial.mark_virtual`."""
