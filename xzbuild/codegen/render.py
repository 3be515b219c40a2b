"""Jinja2 environment over ``templates/`` (the checkout's, or the wheel's copy: ``xzbuild.core.resources``)."""

from __future__ import annotations

from functools import cache
from typing import Any

from xzbuild.core.resources import templates_dir

TEMPLATES_DIR = templates_dir()


@cache
def environment() -> Any:
    """The shared Jinja2 environment: strict undefineds, block tags that leave no blank lines."""
    import jinja2

    from xzbuild.core.sinks import kconfig_quote

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # C, CMake and Kconfig text, not HTML: each value is checked for its sink (core.sinks)
    )
    env.filters["kconfig_str"] = kconfig_quote  # free text inside a Kconfig "..." string
    return env


def render(template: str, **context: Any) -> str:
    """Render ``templates/<template>`` with ``context``."""
    return str(environment().get_template(template).render(**context))


def template_exists(template: str) -> bool:
    """True if ``templates/<template>`` exists (archetype lookups)."""
    return (TEMPLATES_DIR / template).is_file()
