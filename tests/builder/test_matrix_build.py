"""`xzbuild matrix build` with the idf.py stand-in: isolation, cache, failures, release artifacts."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import jsonschema
import pytest

from tests.builder.firmware import make_project, standin_env
from xzbuild.builder.results import BuildStatus, read_records
from xzbuild.builder.webtools import MANIFEST_SCHEMA
from xzbuild.cli.main import main
from xzbuild.core.images import verify_image
from xzbuild.partitions import parse_binary


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.boards, self.firmware = make_project(root)
        self.out = root / "dist"
        self.cache = root / "cache"
        self.log = root / "standin.jsonl"

    def standin(self, monkeypatch: pytest.MonkeyPatch, **knobs: str) -> None:
        """Put the idf.py stand-in first on PATH, with these knobs only."""
        for key in [k for k in os.environ if k.startswith("XZ_STANDIN_")]:
            monkeypatch.delenv(key)
        for key, value in standin_env(self.log, **{"XZ_STANDIN_ASSETS": "bread-compact-wifi", **knobs}).items():
            monkeypatch.setenv(key, value)

    def build(self, monkeypatch: pytest.MonkeyPatch, *args: str, out: Path | None = None, **knobs: str) -> int:
        self.standin(monkeypatch, **knobs)
        urls = [] if any(a.startswith("--base-url") for a in args) else ["--relative-urls"]
        return main(["matrix", "build", "--boards", str(self.boards), "--firmware", str(self.firmware),
                     "--out", str(out or self.out), "--cache-dir", str(self.cache), *urls, *args])

    def invocations(self) -> list[dict[str, object]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def records(self, out: Path | None = None) -> dict[str, BuildStatus]:
        return {r.full_name: r.status for r in read_records((out or self.out) / "results.jsonl")}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def publishing_view(merged: bytes, zip_stem: str) -> tuple[str, bytes]:
    """What upstream's publishing script recovers from a release (spec §9): the board from the zip name,
    the app cut out of the first app partition (segments + checksum, rounded to 16, + 32 for the hash),
    with the rest of the slot 0xFF."""
    board = zip_stem.split("_")[1]
    table = parse_binary(merged[0x8000:0x8C00])
    slot = table.apps()[0]
    data = merged[slot.offset : slot.offset + slot.size]
    pos, size = 0x18, 0x18
    for _ in range(data[1]):
        length = int.from_bytes(data[pos + 4 : pos + 8], "little")
        pos, size = pos + 8 + length, size + 8 + length
    size = (size + 1 + 15) & ~15
    size += 32 if data[0x17] == 1 else 0
    assert set(data[size:]) <= {0xFF}
    return board, data[:size]


def check_variant_dir(out: Path, record: dict[str, object]) -> None:
    """Every image parses with valid checksum/SHA-256; sha256/size/offset facts match the files."""
    full_name = str(record["full_name"])
    vdir = out / full_name
    chip = str(record["target"])
    args = json.loads((vdir / "flasher_args.json").read_text())
    for entry in record["files"]:  # type: ignore[attr-defined]
        data = (out / entry["path"]).read_bytes()
        assert len(data) == entry["size"]
        if entry["role"] == "app":
            info = verify_image(data, chip, kind="app")
            assert info.app_desc is not None and info.app_desc.version == record["app_version"]
            assert entry["offset"] == int(args["app"]["offset"], 16)
        if entry["role"] == "bootloader":
            verify_image(data, chip, kind="bootloader")
    merged = (vdir / "merged-binary.bin").read_bytes()
    board, app = publishing_view(merged, f"v2.4.2_{full_name}")
    assert board == full_name and app == (vdir / "xiaozhi.bin").read_bytes()
    for offset, rel in args["flash_files"].items():
        part = (vdir / rel).read_bytes()
        assert merged[int(offset, 16) : int(offset, 16) + len(part)] == part, rel
    table = parse_binary(merged[0x8000:0x8C00])
    assert table.boot_app() is not None and table.boot_app().offset == int(args["app"]["offset"], 16)  # type: ignore[union-attr]
    for kind in ("factory", "update"):
        path = record["webtools"][kind]  # type: ignore[index]
        if path is not None:
            manifest = json.loads((out / path).read_text())
            jsonschema.validate(manifest, MANIFEST_SCHEMA)
            for part in manifest["builds"][0]["parts"]:
                assert (vdir / part["path"]).is_file()
    ota = json.loads((vdir / "ota.json").read_text())
    assert ota == {"firmware": {"version": record["app_version"], "url": f"{full_name}/xiaozhi.bin"}}


def test_build_cache_and_edit(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    assert project.build(monkeypatch, "--all", "--jobs", "2") == 0
    statuses = project.records()
    assert statuses.pop("espressif-esp32-s31-function-coreboard-1") is BuildStatus.DISABLED
    assert len(statuses) == 12 and set(statuses.values()) == {BuildStatus.BUILT}
    first_calls = project.invocations()
    assert {tuple(c["actions"]) for c in first_calls} == {("--version",), ("build", "merge-bin")}  # type: ignore[arg-type]
    builds = [c for c in first_calls if "build" in c["actions"]]
    assert len(builds) == 12 and len({c["argv"][c["argv"].index("-B") + 1] for c in builds}) == 12  # type: ignore[union-attr,index]

    manifest = json.loads((project.out / "manifest.json").read_text())
    assert manifest["count"] == 12
    for record in manifest["variants"]:
        check_variant_dir(project.out, record)
        with zipfile.ZipFile(project.out / "releases" / f"v2.4.2_{record['full_name']}.zip") as zf:  # upstream name + layout
            assert [(i.filename, i.compress_type) for i in zf.infolist()] == [("merged-binary.bin",
                                                                               zipfile.ZIP_DEFLATED)]
            assert zf.read("merged-binary.bin") == (project.out / record["full_name"] / "merged-binary.bin").read_bytes()
    revisions = {v["full_name"]: v["chip_revision"] for v in manifest["variants"]}
    assert revisions["espressif-esp32-p4-function-ev-board"] == {"min": "v1.0", "max": "v2.99"}
    assert revisions["espressif-esp32-p4x-function-ev-board"] == {"min": "v3.0", "max": "v3.99"}
    assert revisions["bread-compact-wifi"] == {"min": "v0.0", "max": "v0.99"}
    wifi = json.loads((project.out / "bread-compact-wifi" / "webtools-update.json").read_text())
    # everything but NVS: bootloader, partition table, otadata, app, assets
    assert [p["offset"] for p in wifi["builds"][0]["parts"]] == [0x0, 0x8000, 0xD000, 0x20000, 0x800000]
    assert not (project.out / "espressif-esp32-s31-function-coreboard-1").exists()

    # No-op rebuild: everything cached, idf.py never started.
    project.log.unlink()
    assert project.build(monkeypatch, "--all", "--jobs", "2") == 0
    assert project.invocations() == []
    assert set(project.records().values()) == {BuildStatus.CACHED, BuildStatus.DISABLED}

    # Editing one board file rebuilds exactly that board's variants.
    board_file = project.boards / "bread-compact-esp32.yaml"
    board_file.write_text(board_file.read_text() + "# a comment changes the content\n")
    assert project.build(monkeypatch, "--all", "--jobs", "2") == 0
    rebuilt = sorted(str(c["board"]) for c in project.invocations() if "build" in c["actions"])
    assert rebuilt == ["bread-compact-esp32", "bread-compact-esp32-128x32"]
    built = sorted(k for k, v in project.records().items() if v is BuildStatus.BUILT)
    assert built == ["bread-compact-esp32", "bread-compact-esp32-128x32"]


def test_failure_summary_keep_going_and_junit(project: Project, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    sel = ["sensecap-watcher", "bread-compact-esp32", "bread-compact-esp32-128x32"]
    rc = project.build(monkeypatch, *sel, "--keep-going", XZ_STANDIN_FAIL="sensecap-*")
    err = capsys.readouterr().err
    assert rc == 1
    assert "sensecap-watcher: ../main/boards/sensecap-watcher/sensecap-watcher.cc:42:5: error: 'AudioCodec'" in err
    records = {r.full_name: r for r in read_records(project.out / "results.jsonl")}
    assert records["sensecap-watcher"].status is BuildStatus.FAILED
    assert records["sensecap-watcher"].reason == "idf.py exited 2"
    assert {r.status for n, r in records.items() if n != "sensecap-watcher"} == {BuildStatus.BUILT}
    assert not (project.out / "sensecap-watcher").exists()
    junit = (project.out / "junit.xml").read_text()
    assert 'failures="1"' in junit and "was not declared in this scope" in junit
    from tests.junit_schema import load_cases

    assert len(load_cases(project.out / "junit.xml")) == 3  # junit-10.xsd-valid, readable by junitparser
    log = (project.out / "logs" / "sensecap-watcher.log").read_text()
    assert "-DBOARD_NAME=sensecap-watcher" in log and "ninja: build stopped" in log

    # The failure is not cached: fixing it (dropping the knob) builds only that variant.
    project.log.unlink()
    assert project.build(monkeypatch, *sel) == 0
    assert [c["board"] for c in project.invocations() if "build" in c["actions"]] == ["sensecap-watcher"]


def test_the_library_reports_through_its_reporter_and_prints_nothing(
        project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """build_variants renders nothing itself: each variant's steps and outcome reach the caller's reporter,
    between one begin and one close; without a reporter the run is silent."""
    from xzbuild.builder.build_planning import BuildRequest, plan_build
    from xzbuild.builder.pool import build_variants
    from xzbuild.builder.progress import BuildReporter
    from xzbuild.builder.results import BuildRecord

    class Recorder(BuildReporter):
        def __init__(self) -> None:
            self.events: list[tuple[str, ...]] = []

        def begin(self) -> None:
            self.events.append(("begin",))

        def start(self, full_name: str) -> None:
            self.events.append(("start", full_name))

        def state(self, full_name: str, state: str) -> None:
            self.events.append(("state", full_name, state))

        def finish(self, record: BuildRecord) -> None:
            self.events.append(("finish", record.full_name, str(record.status)))

        def close(self) -> None:
            self.events.append(("close",))

    project.standin(monkeypatch, XZ_STANDIN_FAIL="bread-compact-esp32-128x32")
    request = BuildRequest(variants=("bread-compact-esp32", "bread-compact-esp32-128x32"), jobs=1, keep_going=True,
                           firmware=project.firmware, idf="standin", out=project.out, boards_dir=project.boards,
                           cache_dir=project.cache, relative_urls=True)
    plan = plan_build(request)
    capsys.readouterr()
    recorder = Recorder()
    build_variants(plan.jobs, plan.runner, plan.options, recorder)
    assert capsys.readouterr() == ("", "")
    events = recorder.events
    assert events[0] == ("begin",) and events[-1] == ("close",) and events.count(("begin",)) == 1
    assert ("finish", "bread-compact-esp32", "built") in events
    assert ("finish", "bread-compact-esp32-128x32", "failed") in events
    ok = [e for e in events if e[1:2] == ("bread-compact-esp32",)]
    assert ok[0] == ("start", "bread-compact-esp32") and ("state", "bread-compact-esp32", "packaging") in ok
    assert ok[-1] == ("finish", "bread-compact-esp32", "built")

    build_variants(plan.jobs, plan.runner, plan.options)  # the default reporter: nothing on the terminal
    assert capsys.readouterr() == ("", "")
    assert project.records() == {"bread-compact-esp32": BuildStatus.CACHED,
                                 "bread-compact-esp32-128x32": BuildStatus.FAILED}


def test_stop_after_first_failure(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    rc = project.build(monkeypatch, "bread-compact-esp32", "bread-compact-esp32-128x32", "--jobs", "1",
                       XZ_STANDIN_FAIL="*")
    assert rc == 1
    statuses = project.records()
    assert sorted(statuses.values()) == [BuildStatus.FAILED, BuildStatus.SKIPPED]


def test_app_larger_than_partition_fails_with_numbers(project: Project, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert project.build(monkeypatch, "bread-compact-esp32") == 0
    assert (project.out / "releases" / "v2.4.2_bread-compact-esp32.zip").is_file()
    capsys.readouterr()
    rc = project.build(monkeypatch, "bread-compact-esp32", "--force",
                       XZ_STANDIN_APP_SIZE="bread-compact-esp32=3200000")
    assert rc == 1
    err = capsys.readouterr().err
    # ESP-IDF's check_sizes.py wording, from the stand-in's own partition table code
    assert "bread-compact-esp32: Error: app partition is too small for binary xiaozhi.bin size 0x30" in err
    assert "Part 'factory' 0/0 @ " in err and " size 0x2f0000 (overflow 0x" in err
    # the older successful build is withdrawn: dist/ never shows an artifact this run failed to make
    assert not (project.out / "bread-compact-esp32").exists()
    assert not (project.out / "releases" / "v2.4.2_bread-compact-esp32.zip").exists()
    assert json.loads((project.out / "manifest.json").read_text())["count"] == 1  # only the 128x32 variant


def test_shards_merge_and_dry_run_docker(project: Project, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    sel = ["--select", "board=bread-compact-*"]
    assert project.build(monkeypatch, *sel, "--shard", "1/2", out=project.root / "s1") == 0
    assert project.build(monkeypatch, *sel, "--shard", "2/2", out=project.root / "s2") == 0
    s1, s2 = project.records(project.root / "s1"), project.records(project.root / "s2")
    assert s1 and s2 and not set(s1) & set(s2)
    capsys.readouterr()
    rc = main(["matrix", "results", "merge", str(project.root / "s1" / "results.jsonl"),
               str(project.root / "s2" / "results.jsonl"), "-o", str(project.root / "all.jsonl"), "--junit",
               str(project.root / "all.xml")])
    assert rc == 0
    from tests.junit_schema import load_cases

    assert sorted(load_cases(project.root / "all.xml")) == sorted([*s1, *s2])
    for shard in ("s1", "s2"):
        assert sorted(load_cases(project.root / shard / "junit.xml")) == sorted(project.records(project.root / shard))
    merged = read_records(project.root / "all.jsonl")
    assert sorted(r.full_name for r in merged) == sorted([*s1, *s2])
    assert {r.shard for r in merged} == {"1/2", "2/2"}

    selection = project.root / "selection.json"  # `matrix select --json` output shape
    selection.write_text(json.dumps({"variants": [{"full_name": "bread-compact-esp32-128x32"}]}))
    assert project.build(monkeypatch, "--selection", str(selection), out=project.root / "s3") == 0
    assert project.records(project.root / "s3") == {"bread-compact-esp32-128x32": BuildStatus.CACHED}
    selection.write_text(json.dumps({"variants": []}))
    assert project.build(monkeypatch, "--selection", str(selection), out=project.root / "s4") == 0
    assert not (project.root / "s4").exists()

    project.log.unlink()
    assert project.build(monkeypatch, "bread-compact-wifi", "--idf", "docker:espressif/idf:v6.0.2", "--dry-run") == 0
    out = capsys.readouterr().out
    assert project.invocations() == []
    assert "docker run --rm -u" in out and f"-v {project.firmware}:/project" in out
    assert "espressif/idf:v6.0.2 bash -c" in out
    assert "-DSDKCONFIG_DEFAULTS=sdkconfig.defaults;/builds/bread-compact-wifi/xzbuild.sdkconfig.defaults" in out
    assert "-DBOARD_NAME=bread-compact-wifi" in out and "merge-bin" in out


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_full_matrix_all_cached_and_one_board_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's figures: every variant of the real boards/ on the generated upstream tree, then a no-op
    rebuild, then one board edit. The variants whose fragment lines the firmware Kconfig drops fail with
    reason config, exactly the ones `boards kconfig-check` warns about; every image says the manifest's IDF."""
    import time

    from tests.builder.firmware import all_board_files
    from xzbuild.codegen.kconfig_check import check_fragments
    from xzbuild.model import load_boards

    project = Project.__new__(Project)
    project.root = tmp_path
    project.boards, project.firmware = make_project(tmp_path, all_board_files())
    project.out, project.cache, project.log = tmp_path / "dist", tmp_path / "cache", tmp_path / "standin.jsonl"
    env = {"XZ_STANDIN_ASSETS": "0"}
    started = time.monotonic()
    assert project.build(monkeypatch, "--all", "--jobs", "2", "--keep-going", **env) == 1
    print(f"full matrix: {time.monotonic() - started:.1f}s")
    records = read_records(project.out / "results.jsonl")
    statuses = [r.status for r in records]
    failed = {r.full_name for r in records if r.status is BuildStatus.FAILED}
    assert {r.reason for r in records if r.status is BuildStatus.FAILED} == {"config"}
    warned = {w.variant for w in check_fragments(load_boards(project.boards), project.firmware)}
    assert {r.name for r in records if r.status is BuildStatus.FAILED} == warned and len(failed) == 12
    assert statuses.count(BuildStatus.BUILT) == 174 - 12 and statuses.count(BuildStatus.DISABLED) == 3
    manifest = json.loads((project.out / "manifest.json").read_text())
    assert manifest["count"] == 162 and manifest["idf"] == "6.0.2"
    for variant in manifest["variants"]:
        app = (project.out / variant["full_name"] / "xiaozhi.bin").read_bytes()
        assert app[0x20:0x24] == bytes.fromhex("3254cdab")  # esp_app_desc_t magic at file offset 0x20
        idf_ver = app[0x20 + 112 : 0x20 + 144].split(b"\0", 1)[0].decode()  # esp_app_desc_t.idf_ver
        assert idf_ver == f"v{manifest['idf']}" == f"v{variant['idf_version'].lstrip('v')}", variant["full_name"]
    project.log.unlink()
    assert project.build(monkeypatch, "--all", "--jobs", "2", "--keep-going", **env) == 1
    rebuilt = {str(c["board"]) for c in project.invocations() if "build" in c["actions"]}
    assert rebuilt == {r.name for r in records if r.status is BuildStatus.FAILED}  # failures are not cached
    assert list(project.records().values()).count(BuildStatus.CACHED) == 162
    project.log.unlink()
    board_file = project.boards / "waveshare" / "esp32-p4-wifi6-touch-lcd.yaml"
    board_file.write_text(board_file.read_text() + "# edited\n")
    assert project.build(monkeypatch, "--all", "--jobs", "2", "--keep-going", **env) == 1
    rebuilt = {str(c["board"]) for c in project.invocations() if "build" in c["actions"]} - warned
    assert len(rebuilt) == 18 and all("wifi6-touch-lcd" in name for name in rebuilt)


def test_user_options_are_checked_after_configure(project: Project, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bread-compact-wifi-128x64", "--language", "en-US", "--wake-word", "disabled"]
    assert project.build(monkeypatch, *args) == 0
    fragment = (project.cache / "work" / "bread-compact-wifi-128x64" / "xzbuild.sdkconfig.defaults").read_text()
    assert "CONFIG_LANGUAGE_EN_US=y\n" in fragment and "CONFIG_WAKE_WORD_DISABLED=y\n" in fragment
    capsys.readouterr()
    # A firmware whose Kconfig lacks the locale: ESP-IDF (and the stand-in's kconfgen) drop the line.
    kconfig = project.firmware / "main" / "Kconfig.projbuild"
    text = kconfig.read_text()
    assert text.count('    config LANGUAGE_EN_US\n        bool "English"\n') == 1
    kconfig.write_text(text.replace('    config LANGUAGE_EN_US\n        bool "English"\n', ""))
    assert project.build(monkeypatch, *args, "--force") == 1
    err = capsys.readouterr().err
    assert "--language: Kconfig rejected CONFIG_LANGUAGE_EN_US=y" in err
    assert read_records(project.out / "results.jsonl")[0].reason == "config"


def test_release_check_catches_oversized_app_and_corrupt_image(project: Project,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """xzbuild's own release checks (independent of what the build tool verified)."""
    from tests.standin.images import make_app_image
    from xzbuild.builder.dist_artifacts import release_variant
    from xzbuild.builder.job import BuildJob
    from xzbuild.core.errors import UserError

    assert project.build(monkeypatch, "bread-compact-esp32-128x32") == 0
    obj = next(project.cache.glob("objects/*/*"))
    record = json.loads((project.out / "bread-compact-esp32-128x32" / "release.json").read_text())
    job = BuildJob(full_name=record["full_name"], name=record["name"], board=record["board"], board_file="-",
                   target="esp32", symbol="-", fragment="", partition_table="partitions/v2/4m.csv",
                   flash_size="4MB", version="2.4.2", idf="6.0.2")
    big = make_app_image("esp32", version="2.4.2", board_name="x", size=0x2F0000 + 0x1000, flash_size="4MB")
    (obj / "xiaozhi.bin").write_bytes(big)
    with pytest.raises(UserError, match=r"xiaozhi.bin is 0x2f.... bytes .* but partition 'factory' holds 0x2f0000"):
        release_variant(job, obj, project.root / "dist2", "new-key", relative_urls=True)
    corrupt = bytearray(make_app_image("esp32", version="2.4.2", board_name="x", flash_size="4MB"))
    corrupt[-40] ^= 1
    (obj / "xiaozhi.bin").write_bytes(bytes(corrupt))
    with pytest.raises(UserError, match="invalid app image: .*SHA-256 does not match"):
        release_variant(job, obj, project.root / "dist2", "new-key", relative_urls=True)
    assert not (project.root / "dist2" / "bread-compact-esp32-128x32").exists()


def test_merged_image_is_checked_against_its_parts_and_made_when_missing(project: Project,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from xzbuild.builder.dist_artifacts import release_variant
    from xzbuild.builder.job import BuildJob
    from xzbuild.core.errors import UserError

    assert project.build(monkeypatch, "bread-compact-wifi-128x64") == 0
    obj = next(project.cache.glob("objects/*/*"))
    good = (obj / "merged-binary.bin").read_bytes()
    job = BuildJob(full_name="bread-compact-wifi-128x64", name="bread-compact-wifi-128x64",
                   board="bread-compact-wifi", board_file="-", target="esp32s3", symbol="-", fragment="",
                   partition_table="partitions/v2/16m.csv", flash_size="16MB", version="2.4.2", idf="6.0.2")
    bad = bytearray(good)
    bad[0x20010] ^= 0xFF  # inside the app
    (obj / "merged-binary.bin").write_bytes(bytes(bad))
    with pytest.raises(UserError, match=r"merged-binary.bin differs from its parts at 0x20010"):
        release_variant(job, obj, project.root / "d2", "k1", relative_urls=True)
    (obj / "merged-binary.bin").unlink()  # a build tool without merge-bin: esptool merges for the release
    record = release_variant(job, obj, project.root / "d2", "k2", relative_urls=True)
    assert (project.root / "d2" / job.full_name / "merged-binary.bin").read_bytes() == good
    assert record["zip"]["path"] == "releases/v2.4.2_bread-compact-wifi-128x64.zip"
