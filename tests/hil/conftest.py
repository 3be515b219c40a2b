"""Fixtures for the HIL tests: virtual boards served over RFC2217 and IDF-shaped build dirs."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hilutil import serve  # noqa: E402
from imagefactory import make_build  # noqa: E402

from hil.vboard import fastserial  # noqa: E402
from hil.vboard.board import VirtualBoard  # noqa: E402
from hil.vboard.rfc2217 import RFC2217Server  # noqa: E402

# The virtual boards served here mark their own URLs for the fast RFC2217 client; esptool's disabled trace
# output is not hex-formatted in this test process (a child process runs stock esptool).
fastserial.quiet_esptool_trace()


@pytest.fixture(scope="session")
def s3_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A full 16 MB ESP32-S3 variant: bootloader, partition table, otadata, app, 4 MiB assets."""
    return make_build(tmp_path_factory.mktemp("s3") / "build", chip="esp32s3")


@pytest.fixture(scope="session")
def c3_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_build(tmp_path_factory.mktemp("c3") / "build", chip="esp32c3", board_name="vboard-c3",
                      assets_size=64 * 1024)


@pytest.fixture
def s3_board() -> Iterator[tuple[VirtualBoard, RFC2217Server]]:
    yield from serve("esp32s3", "24ec4a010203", psram=8)


@pytest.fixture
def c3_board() -> Iterator[tuple[VirtualBoard, RFC2217Server]]:
    yield from serve("esp32c3", "34b7da040506")
