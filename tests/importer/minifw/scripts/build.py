"""Stand-in for the firmware's build script: only the constant tables the importer reads."""

_DYNAMIC_CAMERA_MIRROR_BOARD_CONFIGS = {
    "CONFIG_BOARD_TYPE_ACME_P4_PANEL_B",
}
_OPTIONAL_CAMERA_ENABLE_SYMBOLS = {
    "CONFIG_BOARD_TYPE_ACME_P4_PANEL": "CONFIG_CAMERA_USB",
}
