"""A part's translation unit that main/CMakeLists.txt compiles into every build (the main component is linked
WHOLE_ARCHIVE) selects every build compiling it, not only the part's users; its header does too. Found by the
selection replay (tests/matrix/test_select_replay.py) on upstream commits e0074e90, 34c0b18d, 5f6c09b8."""

from __future__ import annotations

import pytest

from tests.matrix.conftest import FileTexts
from tests.matrix.test_select import ENTRIES, graph
from xzbuild.matrix.select import select_variants

ALL = [e.full_name for e in ENTRIES]
UNIT = "main/audio/codecs/es8311_audio_codec.cc"
LISTED = 'set(SOURCES "audio/codecs/es8311_audio_codec.cc" "main.cc")\n'
GLOBBED = "file(GLOB CODECS ${CMAKE_CURRENT_SOURCE_DIR}/audio/codecs/*.cc)\n"
NOT_LISTED = 'set(SOURCES "main.cc")\n'
GATED = 'if(CONFIG_IDF_TARGET_ESP32C3)\n    list(APPEND SOURCES "audio/codecs/es8311_audio_codec.cc")\nendif()\n'


@pytest.mark.parametrize(("cmake", "path", "expected"), [
    (LISTED, UNIT, ALL),  # compiled everywhere: everything
    (LISTED, "main/audio/codecs/es8311_audio_codec.h", ALL),  # its header reaches the unit everywhere
    (GLOBBED, UNIT, ALL),  # older trees: file(GLOB) of the directory
    (GATED, UNIT, ["beta", "beta-2"]),  # compiled for esp32c3 only: those builds
    (NOT_LISTED, UNIT, []),  # a unit the component does not compile reaches no build
])
def test_part_units_select_every_build_compiling_them(cmake: str, path: str, expected: list[str]) -> None:
    texts = FileTexts({path: "int a;\n", "main/CMakeLists.txt": cmake}, {path: "int b;\n", "main/CMakeLists.txt": cmake})
    assert [e.full_name for e in select_variants(ENTRIES, [path], graph(), texts, 1.0).entries] == expected
