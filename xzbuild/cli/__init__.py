"""Command-line interface: one module per command group, each exporting ``COMMANDS``.

Modules here must stay cheap to import (click only at top level); heavy libraries are imported inside the
command functions so that ``xzbuild matrix list`` starts fast.
"""
