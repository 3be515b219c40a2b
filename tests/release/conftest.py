"""Fixtures for the release-site tests: one small stand-in release per session, built once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.release.browser import TIMINGS
from tests.release.factory import SMALL, build_release


@pytest.fixture(scope="session")
def small_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `matrix build` output of SMALL (S3 ×2, ESP32, C6, a P4/P4X pair), built once per session."""
    return build_release(tmp_path_factory.mktemp("release-small"), SMALL)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TIMINGS:
        terminalreporter.section("release site timings (chromium, loopback)")
        for line in TIMINGS:
            terminalreporter.write_line(line)
