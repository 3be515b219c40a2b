"""`select_variants` rules on a small graph, and `matrix select` end to end on a git firmware tree."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.matrix.conftest import FileTexts, make_entry
from xzbuild.cli.main import cli
from xzbuild.matrix.graph import BoardGraph, BoardNode, load_path_map
from xzbuild.matrix.select import select_variants

ENTRIES = [
    make_entry("alpha", "alpha"),
    make_entry("alpha", "alpha-oled"),
    make_entry("vendor/beta", "beta", "esp32c3"),
    make_entry("vendor/beta-2", "beta-2", "esp32c3"),
    make_entry("gamma", "gamma", "esp32p4"),
]


def graph() -> BoardGraph:
    nodes = {
        "alpha": BoardNode("alpha", "alpha", "esp32s3", {"BOARD_TYPE_ALPHA"}, "boards/alpha.yaml",
                           {"codec/es8311", "network/wifi"}),
        "vendor/beta": BoardNode("vendor/beta", "beta", "esp32c3", {"BOARD_TYPE_BETA"}, "boards/vendor/beta.yaml",
                                 {"network/wifi"}),
        # beta-2 reuses beta's sources through #include "../beta/..."
        "vendor/beta-2": BoardNode("vendor/beta-2", "beta-2", "esp32c3", {"BOARD_TYPE_BETA_2"},
                                   "boards/vendor/beta-2.yaml", {"network/wifi"}, {"vendor/beta"}),
        "gamma": BoardNode("gamma", "gamma", "esp32p4", {"BOARD_TYPE_GAMMA"}, "boards/gamma.yaml", {"display/lcd"},
                           sources="i2s-spi-lcd"),
    }
    return BoardGraph(nodes, load_path_map())


def chosen(paths: list[str], threshold: float = 1.0) -> list[str]:
    return [e.full_name for e in select_variants(ENTRIES, paths, graph(), None, threshold).entries]


@pytest.mark.parametrize(("paths", "expected"), [
    (["boards/alpha.yaml"], ["alpha", "alpha-oled"]),  # xzbuild repo: a board file → its variants
    (["boards/removed.yaml"], []),
    (["boards/board.schema.json", "boards/README.md"], []),
    (["templates/archetypes/i2s-spi-lcd.cc.j2"], ["gamma"]),
    (["templates/archetypes/_parts.j2"], ["gamma"]),
    (["templates/config_h.j2"], ["alpha", "alpha-oled", "beta", "beta-2", "gamma"]),
    (["boards/_firmware.yaml"], ["alpha", "alpha-oled", "beta", "beta-2", "gamma"]),
    (["main/boards/alpha/alpha_board.cc"], ["alpha", "alpha-oled"]),
    (["main/boards/alpha/README.md"], ["alpha", "alpha-oled"]),  # board-dir files always count
    (["main/boards/vendor/beta/config.h"], ["beta", "beta-2"]),  # sibling include
    (["main/boards/vendor/beta-2/x.cc"], ["beta-2"]),
    (["main/boards/orphan/x.cc"], []),
    (["main/audio/codecs/es8311_audio_codec.cc"], ["alpha", "alpha-oled"]),  # part → its users
    (["main/display/lcd_display.h"], ["gamma"]),
    (["main/audio/engines/lite_audio_engine.cc"], ["beta", "beta-2"]),  # target-compiled source
    (["sdkconfig.defaults.esp32p4"], ["gamma"]),
    (["main/assets/locales/ja-JP/language.json"], []),  # release builds use zh-CN (+ en-US sounds)
    (["docs/custom-board.md", "main/audio/README.md", "docker/Dockerfile", ".github/workflows/build.yml"], []),
    (["main/application.cc"], ["alpha", "alpha-oled", "beta", "beta-2", "gamma"]),
    (["main/assets/locales/zh-CN/language.json"], ["alpha", "alpha-oled", "beta", "beta-2", "gamma"]),
    (["scripts/gen_lang.py"], ["alpha", "alpha-oled", "beta", "beta-2", "gamma"]),
    (["components/foo/foo.c"], ["alpha", "alpha-oled", "beta", "beta-2", "gamma"]),
    (["xzbuild/matrix/select.py"], ["alpha", "alpha-oled", "beta", "beta-2", "gamma"]),
    # the tables cannot be diffed without base/head content: conservative
    (["main/Kconfig.projbuild"], ["alpha", "alpha-oled", "beta", "beta-2", "gamma"]),
])
def test_rules(paths: list[str], expected: list[str]) -> None:
    assert chosen(paths) == expected


def test_threshold_turns_most_into_everything() -> None:
    sel = select_variants(ENTRIES, ["main/boards/common/wifi_board.cc"], graph(), None, threshold=0.8)
    assert sel.everything is not None and "threshold" in sel.everything
    assert len(sel.entries) == len(ENTRIES)
    assert chosen(["main/boards/common/wifi_board.cc"]) == ["alpha", "alpha-oled", "beta", "beta-2"]


def test_why_explains_each_variant() -> None:
    sel = select_variants(ENTRIES, ["main/boards/vendor/beta/config.h", "boards/gamma.yaml"], graph(), None, 1.0)
    assert sel.why["beta"] == ["main/boards/vendor/beta/config.h: board source changed"]
    assert sel.why["beta-2"] == ["main/boards/vendor/beta/config.h: board sources include files from "
                                 "main/boards/vendor/beta"]
    assert sel.why["gamma"] == ["boards/gamma.yaml: board definition changed"]


def test_part_paths_without_firmware_scan_select_everything() -> None:
    g = graph()
    for node in g.nodes.values():
        node.parts = None
    sel = select_variants(ENTRIES, ["main/audio/codecs/es8311_audio_codec.cc"], g, None, 1.0)
    assert sel.everything is not None and "--firmware" in sel.everything


# ---- end to end: a small firmware git repository and the real board files ----

def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


KCONFIG_ENTRY = '    config BOARD_TYPE_{sym}\n        bool "{label}"\n        depends on IDF_TARGET_ESP32S3\n'
CMAKE_BRANCH = '{kw}(CONFIG_BOARD_TYPE_{sym})\n    set(BOARD_DIR "{dir}")\n'


def tables(boards: list[tuple[str, str]], deps: str = "") -> dict[str, str]:
    entries = "".join(KCONFIG_ENTRY.format(sym=s, label=d) for d, s in boards)
    chain = "".join(CMAKE_BRANCH.format(kw="if" if i == 0 else "elseif", sym=s, dir=d)
                    for i, (d, s) in enumerate(boards))
    return {
        "main/Kconfig.projbuild": f"choice BOARD_TYPE\n    prompt \"Target Board\"\n{entries}endchoice\n",
        "main/CMakeLists.txt": f'set(SOURCES "application.cc")\n{chain}endif()\n',
        "main/idf_component.yml": f"dependencies:\n  lvgl/lvgl: ~9.5.0\n{deps}",
    }


@pytest.fixture(scope="module")
def firmware_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("firmware")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    write(repo, {
        **tables([("bread-compact-wifi", "BREAD_COMPACT_WIFI")]),
        "main/application.cc": "int app;\n",
        "main/audio/codecs/es8311_audio_codec.cc": "// codec\n",
        "main/boards/common/wifi_board.cc": "// wifi\n",
        "main/boards/bread-compact-wifi/compact_wifi_board.cc":
            '#include "wifi_board.h"\n#include "codecs/no_audio_codec.h"\nclass B : public WifiBoard {};\n',
    })
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    # Add a board the upstream way: tables, a component only it uses, its directory.
    write(repo, {
        **tables([("bread-compact-wifi", "BREAD_COMPACT_WIFI"), ("hu-087", "HU_087")],
                 deps="  espressif/esp_lcd_gc9a01: ~2.0.4\n"),
        "main/boards/hu-087/hu_087_board.cc": '#include <esp_lcd_gc9a01.h>\n#include "wifi_board.h"\n',
        "main/boards/hu-087/config.h": "#define X 1\n",
    })
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add hu-087")
    write(repo, {"main/audio/codecs/es8311_audio_codec.cc": "// codec v2\n"})
    git(repo, "commit", "-qam", "codec fix")
    write(repo, {"main/application.cc": "int app = 2;\n"})
    git(repo, "commit", "-qam", "app change")
    return repo


def run_select(repo_root: Path, firmware: Path, *args: str, stdin: str | None = None) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["matrix", "select", "--boards", str(repo_root / "boards"), "--repo",
                                      str(firmware), "--json", *args], input=stdin)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def names(data: dict[str, object]) -> list[str]:
    return [v["full_name"] for v in data["variants"]]  # type: ignore[attr-defined, index]


def test_adding_a_board_selects_only_its_variants(repo_root: Path, firmware_repo: Path) -> None:
    data = run_select(repo_root, firmware_repo, "--base", "HEAD~3", "--head", "HEAD~2")
    assert names(data) == ["hu-087"]
    assert data["everything"] is None


def test_part_change_selects_its_users_only(repo_root: Path, firmware_repo: Path) -> None:
    # bread-compact-wifi uses NoAudioCodec, nobody in this tree uses Es8311AudioCodec
    assert names(run_select(repo_root, firmware_repo, "--base", "HEAD~2", "--head", "HEAD~1")) == []


def test_shared_source_change_selects_everything(repo_root: Path, firmware_repo: Path) -> None:
    data = run_select(repo_root, firmware_repo, "--base", "HEAD~1", "--head", "HEAD")
    assert data["everything"] is not None and data["count"] == 174


def test_stdin_paths_and_shard(repo_root: Path, firmware_repo: Path) -> None:
    data = run_select(repo_root, firmware_repo, stdin="boards/bread-compact-wifi.yaml\n\ndocs/x.md\n")
    assert names(data) == ["bread-compact-wifi", "bread-compact-wifi-128x64"]
    one = run_select(repo_root, firmware_repo, "--shard", "1/2", stdin="boards/bread-compact-wifi.yaml\n")
    two = run_select(repo_root, firmware_repo, "--shard", "2/2", stdin="boards/bread-compact-wifi.yaml\n")
    assert sorted(names(one) + names(two)) == ["bread-compact-wifi", "bread-compact-wifi-128x64"]


def test_why_text_output(repo_root: Path, firmware_repo: Path) -> None:
    result = CliRunner().invoke(cli, ["matrix", "select", "--boards", str(repo_root / "boards"), "--repo",
                                      str(firmware_repo), "--base", "HEAD~3", "--head", "HEAD~2", "--why"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("hu-087\n    main/CMakeLists.txt: changed entries concern only these boards\n")
    assert "    main/boards/hu-087/config.h: board source changed\n" in result.stdout
    assert "main/Kconfig.projbuild: 1 variant(s)" in result.stderr
    assert "selected 1 of 174 variants" in result.stderr


def test_bad_revision_is_one_line_error(repo_root: Path, firmware_repo: Path) -> None:
    from xzbuild.cli.main import main

    code = main(["matrix", "select", "--boards", str(repo_root / "boards"), "--repo", str(firmware_repo),
                 "--base", "no-such-rev"])
    assert code == 1


@pytest.mark.parametrize(("old", "new", "same"), [
    ("int x = 1; // one\n", "int  x = 1;\n\n", True),
    ("/* a\n b */ int y;\n", "int y;\n", True),
    ("int a;\nint y;\n", "int a; int y;\n", False),  # line breaks stay significant
    ("/* a */ int y;\n", "int y; /* b */\n", True),
    ('const char* u = "https://a";\n', 'const char* u = "https://b";\n', False),  # not a comment
    ('s = "a  b";\n', 's = "a b";\n', False),  # spacing inside a literal is data
    ("#define A 1\nint x;\n", "#define A 1 int x;\n", False),  # a directive ends at the newline
    ("c = '/';\n", "c = '/'; // x\n", True),
])
def test_comment_only_source_changes(old: str, new: str, same: bool) -> None:
    from xzbuild.matrix.csource import same_code

    assert same_code(old, new) is same


def test_comment_only_change_to_shared_source_selects_nothing() -> None:
    path = "main/application.cc"
    texts = FileTexts({path: "void f() {}\n"}, {path: "// explain f\nvoid f() {}\n"})
    assert select_variants(ENTRIES, [path], graph(), texts, 1.0).entries == []
    texts = FileTexts({path: "void f() {}\n"}, {path: "void f() { g(); }\n"})
    assert len(select_variants(ENTRIES, [path], graph(), texts, 1.0).entries) == len(ENTRIES)
    # a board's own file still selects its board, comments or not
    board_file = "main/boards/alpha/a.cc"
    texts = FileTexts({board_file: "int a;\n"}, {board_file: "int a; // x\n"})
    assert [e.full_name for e in select_variants(ENTRIES, [board_file], graph(), texts, 1.0).entries] == [
        "alpha", "alpha-oled"]


def test_partition_table_changes_select_its_users(board_set) -> None:  # type: ignore[no-untyped-def]
    from xzbuild.matrix import list_variants

    entries = [e for e in list_variants(board_set, "6.0.2") if e.enabled]
    g = BoardGraph.from_model(board_set)
    for path in ("partitions/v2/4m.csv", "boards/partitions/v2/4m.csv"):
        picked = select_variants(entries, [path], g, None, 1.0).entries
        assert picked and all(e.variant.partition_table == "partitions/v2/4m.csv" for e in picked)  # type: ignore[union-attr]
        assert {e.target for e in picked} >= {"esp32"}
    assert select_variants(entries, ["partitions/v1/8m.csv"], g, None, 1.0).entries == []  # unreferenced


@pytest.mark.parametrize(("old", "new", "targets"), [
    # a version bump of a dependency whose headers no source of this tree includes
    ("  lvgl/lvgl: ~9.5.0\n", "  lvgl/lvgl: ~9.6.0\n", None),
    # a new dependency nothing includes yet
    ("  lvgl/lvgl: ~9.5.0\n", "  lvgl/lvgl: ~9.5.0\n  espressif/esp_codec_dev: ~1.5.0\n", None),
    # the same, limited by the manifest's rules to one target: that target's builds
    ("  lvgl/lvgl: ~9.5.0\n", "  lvgl/lvgl: ~9.5.0\n  espressif/esp_codec_dev:\n    version: ~1.5.0\n    rules:\n"
                              "    - if: target in [esp32c3]\n", {"esp32c3"}),
], ids=["bump", "added", "added-for-esp32c3"])
def test_manifest_dependency_nothing_includes_selects_every_build(
        repo_root: Path, tmp_path: Path, old: str, new: str, targets: set[str] | None) -> None:
    """The component manager adds every dependency of main/idf_component.yml to every build its `rules` allow:
    the component is compiled and linked into each image and its Kconfig options enter each sdkconfig,
    whether or not a source includes its headers. A change to one no source includes selects every variant
    (of the targets its rules allow), not none."""
    repo = tmp_path / "fw"
    git(repo.parent, "init", "-q", str(repo))
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    write(repo, {
        **tables([("bread-compact-wifi", "BREAD_COMPACT_WIFI")]),
        "main/application.cc": "int app;\n",
        "main/boards/common/wifi_board.cc": "// wifi\n",
        "main/boards/bread-compact-wifi/compact_wifi_board.cc": '#include "wifi_board.h"\n',
    })
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    manifest = repo / "main/idf_component.yml"
    assert old in manifest.read_text()
    manifest.write_text(manifest.read_text().replace(old, new))
    git(repo, "commit", "-qam", "manifest")
    data = run_select(repo_root, repo, "--base", "HEAD~1", "--head", "HEAD")
    everything = run_select(repo_root, repo, stdin="sdkconfig.defaults\n")  # a file every build reads
    assert everything["count"] == 174
    if targets is None:
        assert data["count"] == everything["count"] and data["everything"] is not None
    else:
        listed = CliRunner().invoke(cli, ["matrix", "list", "--boards", str(repo_root / "boards"), "--json"])
        target_of = {v["full_name"]: v["target"] for v in json.loads(listed.stdout)}
        expected = [n for n in names(everything) if target_of[n] in targets]
        assert expected and names(data) == expected
