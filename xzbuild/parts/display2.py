"""A second display on the same board (``DISPLAY_*_1`` macros)."""

from xzbuild.parts.base import F, Part

PART = Part("display2", "Second display geometry and orientation.", (
    F("width", "int", "DISPLAY_WIDTH_1"),
    F("height", "int", "DISPLAY_HEIGHT_1"),
    F("mirror_x", "bool", "DISPLAY_MIRROR_X_1"),
    F("mirror_y", "bool", "DISPLAY_MIRROR_Y_1"),
    F("swap_xy", "bool", "DISPLAY_SWAP_XY_1"),
))
