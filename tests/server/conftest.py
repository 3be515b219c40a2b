"""Fixtures for the reference-server tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest


@pytest.fixture
def run() -> Callable[[Coroutine[Any, Any, Any]], Any]:
    """Run a coroutine to completion on a fresh event loop (no pytest-asyncio needed)."""

    def _run(coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run(asyncio.wait_for(coro, 60))

    return _run
