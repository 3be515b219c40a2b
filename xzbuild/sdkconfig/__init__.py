"""sdkconfig defaults fragments per variant (upstream layering) — façade over ``xzbuild.sdkconfig.fragment``."""

from xzbuild.sdkconfig.fragment import (
    AUTO_SELECTS,
    HEADER,
    UPSTREAM_HEADER,
    Fragment,
    apply_auto_selects,
    board_lines,
    defaults_list,
    expand_build_options,
    language_option,
    merge_options,
    normalize_build_options,
    variant_fragment,
    wake_word_options,
)

__all__ = [
    "AUTO_SELECTS",
    "HEADER",
    "UPSTREAM_HEADER",
    "Fragment",
    "apply_auto_selects",
    "board_lines",
    "defaults_list",
    "expand_build_options",
    "language_option",
    "merge_options",
    "normalize_build_options",
    "variant_fragment",
    "wake_word_options",
]
