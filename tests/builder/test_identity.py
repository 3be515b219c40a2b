"""Wrong-board cases: each is refused before building or failed after it, with one line, and ships nothing.

The firmware is the pinned upstream tree with `xzbuild generate` run for the test's boards; idf.py is the
stand-in, which resolves the sdkconfig with esp-idf-kconfig's kconfgen over that tree's Kconfig (so an
undeclared or unselectable BOARD_TYPE falls back to the target's default board, as with ESP-IDF).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.builder.firmware import copy_boards, generated_firmware, standin_env
from xzbuild.builder.results import BuildStatus, read_records
from xzbuild.cli.main import main

BOARDS = ["_firmware.yaml", "bread-compact-wifi.yaml", "xmini/c3-v3.yaml", "m5stack/stick-s3.yaml"]
CLEAN = "xmini-c3-v3"  # built in every case: the run goes on (--keep-going) and the good variant ships


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("identity")
    boards = copy_boards(root / "boards", BOARDS[1:])
    generated_firmware(root / "firmware", boards)
    return root


@dataclass
class Case:
    root: Path

    @property
    def boards(self) -> Path:
        return self.root / "boards"

    @property
    def firmware(self) -> Path:
        return self.root / "firmware"

    @property
    def out(self) -> Path:
        return self.root / "dist"

    def edit(self, rel: str, old: str, new: str) -> None:
        path = self.firmware / rel
        text = path.read_text(encoding="utf-8")
        assert text.count(old) >= 1, (rel, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def case(pristine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Case:
    shutil.copytree(pristine, tmp_path / "p", symlinks=True)
    for key, value in standin_env(tmp_path / "standin.jsonl", XZ_STANDIN_ASSETS="0").items():
        monkeypatch.setenv(key, value)
    return Case(tmp_path / "p")


def build(case: Case, *variants: str, extra: tuple[str, ...] = ()) -> int:
    return main(["matrix", "build", *variants, CLEAN, "--keep-going", "--boards", str(case.boards), "--firmware",
                 str(case.firmware), "--out", str(case.out), "--cache-dir", str(case.root / "cache"),
                 "--relative-urls", *extra])


def new_board_never_generated(case: Case) -> None:
    text = (case.boards / "xmini" / "c3-v3.yaml").read_text(encoding="utf-8")
    for old, new in (("xmini-c3-v3", "acme-c3-kit"), ("BOARD_TYPE_XMINI_C3_V3", "BOARD_TYPE_ACME_C3_KIT"),
                     ("Xmini C3 V3", "Acme C3 Kit"), ("target_default: true", "target_default: false"),
                     ("manufacturer: xmini\n", "")):
        text = text.replace(old, new)
    (case.boards / "acme-c3-kit.yaml").write_text(text, encoding="utf-8")


def symbol_missing(case: Case) -> None:
    case.edit("main/Kconfig.projbuild", '    config BOARD_TYPE_BREAD_COMPACT_WIFI\n        bool "Bread Compact Wi-Fi'
              ' (面包板)"\n        depends on IDF_TARGET_ESP32S3\n', "")


def symbol_for_other_target(case: Case) -> None:
    case.edit("main/Kconfig.projbuild", 'bool "Bread Compact Wi-Fi (面包板)"\n        depends on IDF_TARGET_ESP32S3\n',
              'bool "Bread Compact Wi-Fi (面包板)"\n        depends on IDF_TARGET_ESP32C3\n')


def drifted_board_file(case: Case) -> None:
    case.edit("main/boards/bread-compact-wifi/config.h", "#define", "#define HAND_EDIT 1\n#define")


def nothing(case: Case) -> None:
    pass


# (case, variant, reason, the one line's distinctive part)
WRONG_BOARDS: list[tuple[str, Callable[[Case], None], str, str, str]] = [
    ("generate never ran", new_board_never_generated, "acme-c3-kit", "identity",
     "main/boards/acme-c3-kit does not exist (generate never ran for this board)"),
    ("symbol missing from Kconfig", symbol_missing, "bread-compact-wifi", "identity",
     "main/Kconfig.projbuild declares no BOARD_TYPE_BREAD_COMPACT_WIFI; ESP-IDF would drop it and build the "
     "default esp32s3 board"),
    ("symbol for another target", symbol_for_other_target, "bread-compact-wifi", "identity",
     "cannot be selected on esp32s3: depends on IDF_TARGET_ESP32C3"),
    ("fragment line Kconfig drops", nothing, "m5stack-stick-s3", "config",
     "config: CONFIG_USE_ESP_WAKE_WORD=y became absent (undeclared, or its dependencies are not met)"),
    ("drifted tree", drifted_board_file, "bread-compact-wifi", "drift",
     "the firmware tree differs from boards/ in main/boards/bread-compact-wifi/config.h"),
]


@pytest.mark.parametrize("title, breakage, variant, reason, line", WRONG_BOARDS, ids=[c[0] for c in WRONG_BOARDS])
def test_wrong_board_is_refused_or_failed_and_ships_nothing(case: Case, capsys: pytest.CaptureFixture[str],
                                                            title: str, breakage: Callable[[Case], None],
                                                            variant: str, reason: str, line: str) -> None:
    breakage(case)
    assert build(case, variant) == 1
    err = capsys.readouterr().err
    named = [text for text in err.splitlines() if text.startswith(f"  {variant}: ")]
    assert len(named) == 1 and line in named[0], err  # one line, naming the variant and the cause
    records = {r.full_name: r for r in read_records(case.out / "results.jsonl")}
    assert records[variant].status is BuildStatus.FAILED and records[variant].reason == reason
    assert records[CLEAN].status is BuildStatus.BUILT
    manifest = json.loads((case.out / "manifest.json").read_text())
    assert [v["full_name"] for v in manifest["variants"]] == [CLEAN]
    assert not (case.out / variant).exists()  # no webtools manifests, no ota.json
    assert [p.name for p in (case.out / "releases").iterdir()] == [f"v2.4.2_{CLEAN}.zip"]
    junit = (case.out / "junit.xml").read_text()
    failed = sum(r.status is BuildStatus.FAILED for r in records.values())
    assert f'name="{variant}"' in junit and f'failures="{failed}"' in junit


def test_drift_can_be_allowed_and_is_recorded(case: Case) -> None:
    drifted_board_file(case)
    assert build(case, "bread-compact-wifi", extra=("--allow-drift",)) == 0
    records = {r.full_name: r for r in read_records(case.out / "results.jsonl")}
    assert records["bread-compact-wifi"].drift == ["main/boards/bread-compact-wifi/config.h"]
    assert records[CLEAN].drift == []
    release = json.loads((case.out / "bread-compact-wifi" / "release.json").read_text())
    assert release["allowed_drift"] == ["main/boards/bread-compact-wifi/config.h"]


def test_clean_tree_builds_and_images_name_their_board(case: Case) -> None:
    from tests.standin.images import read_standin_info

    assert build(case, "bread-compact-wifi") == 0
    manifest = json.loads((case.out / "manifest.json").read_text())
    assert sorted(v["full_name"] for v in manifest["variants"]) == ["bread-compact-wifi", "bread-compact-wifi-128x64", CLEAN]
    for name, symbol in (("bread-compact-wifi", "CONFIG_BOARD_TYPE_BREAD_COMPACT_WIFI"),
                         (CLEAN, "CONFIG_BOARD_TYPE_XMINI_C3_V3")):
        info = read_standin_info((case.out / name / "xiaozhi.bin").read_bytes())
        assert info["board_type"] == [symbol]  # what the stand-in compiled in, from its own resolution
        resolved = json.loads((case.out / name / "config" / "sdkconfig.json").read_text())
        assert [k for k, v in resolved.items() if k.startswith("BOARD_TYPE_") and v is True] == [symbol[7:]]


def test_without_the_checks_esp_idf_would_build_the_default_board(case: Case) -> None:
    """What the pre-build refusal prevents: the stand-in, like ESP-IDF, drops the undeclared symbol and builds
    the target's default board; the post-build check names it."""
    import subprocess
    import sys

    from tests.builder.firmware import STANDIN_DIR
    from xzbuild.builder.identity import verify_build
    from xzbuild.builder.job import BuildJob

    symbol_missing(case)
    build_dir = case.root / "b"
    build_dir.mkdir()
    fragment = "# test\nCONFIG_BOARD_TYPE_BREAD_COMPACT_WIFI=y\nCONFIG_OLED_SSD1306_128X32=y\n"
    (build_dir / "frag").write_text(fragment)
    proc = subprocess.run([sys.executable, str(STANDIN_DIR / "idf.py"), "-C", str(case.firmware), "-B",
                           str(build_dir), f"-DSDKCONFIG={build_dir}/sdkconfig",
                           f"-DSDKCONFIG_DEFAULTS=sdkconfig.defaults;{build_dir}/frag", "-DIDF_TARGET=esp32s3",
                           "-DBOARD_NAME=bread-compact-wifi", "build"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "unknown kconfig symbol 'BOARD_TYPE_BREAD_COMPACT_WIFI'" in proc.stdout + proc.stderr
    job = BuildJob(full_name="bread-compact-wifi", name="bread-compact-wifi", board="bread-compact-wifi",
                   board_file="-", target="esp32s3", symbol="CONFIG_BOARD_TYPE_BREAD_COMPACT_WIFI", fragment=fragment,
                   partition_table="partitions/v2/16m.csv", flash_size="16MB", version="2.4.2", idf="6.0.2")
    wrong = verify_build(job, build_dir, "xiaozhi")
    assert wrong is not None and wrong[0] == "config"
    assert wrong[1][0].startswith("the resolved sdkconfig selects BOARD_TYPE_")
    assert "CONFIG_BOARD_TYPE_BREAD_COMPACT_WIFI=y became absent" in " ".join(wrong[1])


@pytest.mark.parametrize("args, line", [
    (("--idf-version", "9.9"), "--idf-version 9.9: the runner is ESP-IDF 6.0.2"),
    (("--idf-version", "6.0"), ""),  # agrees: 6.0.2 is a 6.0
    (("--idf", "standout"), "--idf 'standout': expected local, docker:IMAGE or standin"),
    (("--base-url", "example.com/fw"), "--base-url 'example.com/fw': expected an absolute http(s) URL"),
])
def test_unknown_idf_version_and_bad_options_are_errors_up_front(case: Case, capsys: pytest.CaptureFixture[str],
                                                                  args: tuple[str, ...], line: str) -> None:
    extra = [a for a in args]
    if "--base-url" in args:
        rc = main(["matrix", "build", CLEAN, "--boards", str(case.boards), "--firmware", str(case.firmware),
                   "--out", str(case.out), "--cache-dir", str(case.root / "cache"), *extra])
    else:
        rc = build(case, extra=tuple(extra))
    err = capsys.readouterr().err
    if not line:
        assert rc == 0, err
        return
    assert rc == 1 and line in err and not case.out.exists()


def test_app_descriptor_idf_version_must_match(case: Case, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The runner's version is remembered per idf.py file; an image stamped with another version fails."""
    assert build(case) == 0
    monkeypatch.setenv("XZ_STANDIN_IDF_VERSION", "6.1.0")  # the remembered answer (6.0.2) is now stale
    capsys.readouterr()
    assert build(case, extra=("--force",)) == 1
    err = capsys.readouterr().err
    assert "xiaozhi.bin app descriptor: ESP-IDF 'v6.1.0', expected v6.0.2" in err
    assert read_records(case.out / "results.jsonl")[0].reason == "identity"
    assert not (case.out / CLEAN).exists()


def test_one_out_holds_one_esp_idf_version(case: Case, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert build(case) == 0
    monkeypatch.setenv("XZ_STANDIN_IDF_VERSION", "6.1.0")
    capsys.readouterr()
    assert main(["matrix", "build", "bread-compact-wifi", "--boards", str(case.boards), "--firmware", str(case.firmware),
                 "--out", str(case.out), "--cache-dir", str(case.root / "cache-6.1"), "--relative-urls"]) == 1
    assert "holds variants built with ESP-IDF 6.0.2; one manifest names one ESP-IDF version" in capsys.readouterr().err
    assert [r.full_name for r in read_records(case.out / "results.jsonl")] == [CLEAN]  # untouched


def test_idf_standin_runs_the_repository_stand_in(case: Case, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`--idf standin` needs no idf.py on PATH; without a source checkout it says where it looked."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert build(case, extra=("--idf", "standin")) == 0
    import xzbuild.builder.toolchain as toolchain

    monkeypatch.setattr(toolchain, "standin_path", lambda: case.root / "no" / "idf.py")
    capsys.readouterr()
    assert build(case, extra=("--idf", "standin", "--force")) == 1
    assert f"--idf standin: {case.root / 'no' / 'idf.py'} not found" in capsys.readouterr().err
