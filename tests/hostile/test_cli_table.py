"""Hostile input at the CLI, as a table: each row is files + argv → exit status and one clear stderr line.

Every row asserts: the expected exit status, no traceback, and a stderr line matching the expected text
(for accepted-with-warning rows, exit 0 and the warning line).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.conftest import assert_clean_failure, run_cli

BOMB = "\n".join(
    ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"{n}: &{n} [{', '.join(['*' + p] * 9)}]" for p, n in zip("abcdefg", "bcdefgh", strict=True)]
    + [f"i: [{', '.join(['*h'] * 9)}]"]) + "\n"  # 9^9 strings from 340 bytes
MERGE_BOMB = "\n".join(
    ["a: &a {x: 1}"] + [f"{n}: &{n} {{<<: [{', '.join(['*' + p] * 8)}]}}" for p, n in zip("abcdefg", "bcdefgh",
                                                                                          strict=True)]) + "\n"
EMPTY_CSV = "# Name, Type, SubType, Offset, Size, Flags\n"
NO_APP_CSV = "nvs, data, nvs, , 0x6000\n"
BIG_CSV = "nvs, data, nvs, , 0x6000\nfactory, app, factory, , 19M\n"
LONG_NAME_CSV = "nvs, data, nvs, , 0x6000\nfactory_app_with_a_long_name, app, factory, , 1M\n"
BINARY = bytes(range(256)) * 4
PNG_64 = "png:64x64"  # placeholders the setup turns into real images
PNG_ODD = "png:100x37"

# (id, files, argv, exit status, stderr regex); "{d}" is the case's temporary directory
CASES: list[tuple[str, dict[str, Any], list[str], int, str]] = [
    ("alias-bomb", {"bomb.yaml": BOMB}, ["boards", "check", "{d}/bomb.yaml"], 1,
     r"bomb\.yaml:\d+:\d+: YAML aliases expand to more than \d+ nodes; write the data out"),
    ("merge-key-bomb", {"bomb.yaml": MERGE_BOMB}, ["boards", "check", "{d}/bomb.yaml"], 1,
     r"bomb\.yaml:\d+:\d+: YAML aliases expand to more than \d+ nodes"),
    ("recursive-alias", {"r.yaml": "a: &a [1, *a]\n"}, ["boards", "check", "{d}/r.yaml"], 1,
     r"r\.yaml:1:\d+: invalid YAML: an alias refers to its own anchor"),
    ("huge-board-file", {"big.yaml": "type: x\n" + "# padding\n" * 120_000}, ["boards", "check", "{d}/big.yaml"],
     1, r"big\.yaml:1:1: file is larger than 1024 KiB"),
    ("deep-nesting", {"deep.yaml": "a: " + "[" * 3000 + "]" * 3000 + "\n"}, ["boards", "check", "{d}/deep.yaml"],
     1, r"deep\.yaml:1:\d+: invalid YAML: exceeded maximum nesting depth"),
    ("partitions-empty", {"p.csv": EMPTY_CSV}, ["partitions", "check", "{d}/p.csv"], 1,
     r"p\.csv:1: the partition table has no partitions"),
    ("partitions-no-app", {"p.csv": NO_APP_CSV}, ["partitions", "check", "{d}/p.csv"], 1,
     r"p\.csv: the table has no app partition"),
    ("partitions-20mb-without-flash-size", {"p.csv": BIG_CSV}, ["partitions", "check", "{d}/p.csv"], 0,
     r"^warning: .*p\.csv: the table ends at 0x1310000 and needs a 32MB flash; pass --flash-size"),
    ("partitions-20mb-with-flash-size", {"p.csv": BIG_CSV}, ["partitions", "check", "{d}/p.csv", "--flash-size",
                                                             "16MB"], 1, r"p\.csv:2: partitions end at 0x1310000 .* but the flash is 16 MB"),
    ("partitions-long-name", {"p.csv": LONG_NAME_CSV}, ["partitions", "check", "{d}/p.csv"], 0,
     r"^warning: .*p\.csv:2: partition name 'factory_app_with_a_long_name' is longer than 16 bytes; the table "
     r"stores 'factory_app_with'"),
    ("partitions-binary-file", {"p.csv": BINARY}, ["partitions", "check", "{d}/p.csv"], 1, r"p\.csv:\d+: .*UTF-8"),
    ("build-options-number", {}, ["matrix", "build", "--all", "--build-options-json", "42"], 2,
     r"--build-options-json.*expected a JSON object of option: value"),
    ("build-options-list", {}, ["matrix", "build", "--all", "--build-options-json", '[["display_style","wechat"]]'],
     2, r"--build-options-json.*expected a JSON object"),
    ("build-options-string", {}, ["matrix", "build", "--all", "--build-options-json", '"wechat"'], 2,
     r"--build-options-json.*expected a JSON object"),
    ("build-options-nested", {}, ["matrix", "build", "--all", "--build-options-json", '{"display_style": [1]}'], 2,
     r"--build-options-json.*expected a JSON object"),
    ("merge-binary-file", {"r.jsonl": BINARY}, ["matrix", "merge", "{d}/r.jsonl", "-o", "{d}/m.json"], 1,
     r"r\.jsonl:\d+: not UTF-8 text \(byte 0x80 at offset 128\)"),
    ("merge-matrix-not-json", {"r.jsonl": '{"full_name": "a", "board": "a", "name": "a", "target": "esp32s3", '
                                          '"idf": "6.0.2", "status": "built"}\n', "m.json": "nope"},
     ["matrix", "merge", "{d}/r.jsonl", "--matrix", "{d}/m.json", "-o", "{d}/out.json"], 1,
     r"m\.json:1:1: not JSON .*; expected the JSON that `matrix github` prints"),
    ("results-merge-binary", {"r.jsonl": BINARY}, ["matrix", "results", "merge", "{d}/r.jsonl"], 1,
     r"r\.jsonl:\d+: not UTF-8 text"),
    ("selection-binary", {"s.json": BINARY}, ["matrix", "build", "--selection", "{d}/s.json"], 1,
     r"s\.json:\d+: not UTF-8 text"),
    ("hil-virtual-negative", {}, ["hil", "run", "--virtual", "-1"], 2, r"--virtual.*-1 is not in the range"),
    ("matrix-list-unknown-idf", {}, ["matrix", "list", "--idf", "9.9"], 2,
     r"ESP-IDF 9\.9 is not a known release line \(5\.3, 5\.4, 5\.5, 6\.0, 6\.1\)"),
    ("matrix-github-unknown-idf", {}, ["matrix", "github", "--idf", "6.0.2", "--idf", "7.2"], 2,
     r"ESP-IDF 7\.2 is not a known release line"),
    ("select-matches-nothing", {"project": True},
     ["matrix", "build", "--boards", "{d}/boards", "--firmware", "{d}/firmware", "--idf-version", "6.0.2",
      "--cache-dir", "{d}/cache", "--out", "{d}/dist", "--relative-urls", "--idf", "standin", "--dry-run",
      "--select", "target=esp32s9"],
     1,
     r"--select target=esp32s9 matches no variant; target values here: esp32s3"),
    ("emoji-symlink-out", {"emo/happy.png": PNG_64, "emo/neutral.png": "symlink:/etc/hostname"},
     ["assets", "emoji", "--size", "64", "--from-dir", "{d}/emo", "-o", "{d}/out"], 1,
     r"emo/neutral\.png: symbolic link to /etc/hostname points outside"),
    ("emoji-missing-warns", {"emo/happy.png": PNG_64, "emo/sad.png": PNG_64},
     ["assets", "emoji", "--size", "64", "--from-dir", "{d}/emo", "-o", "{d}/out"], 0,
     r"^warning: 19 of 21 standard emotions missing \(neutral, laughing"),
    ("bundle-emoji-odd-size-warns", {**{f"emo/{n}.png": PNG_64 for n in ("neutral", "happy", "sad")},
                                     "emo/angry.png": PNG_ODD},
     ["assets", "build", "-o", "{d}/assets.bin", "--emoji-dir", "{d}/emo"], 0,
     r"^warning: .*emo: emoji sizes differ from the usual 64x64: angry\.png is 100x37"),
    ("out-is-a-file", {"dist": "not a directory"},
     ["partitions", "build", "{repo}/boards/partitions/v2/16m.csv", "-o", "{d}/dist/table.bin"], 1,
     r"dist.*: Not a directory; a file is in the way where a directory is needed"),
    ("schema-out-is-a-file", {"f": "x"}, ["boards", "schema", "-o", "{d}/f/schema.json"], 1,
     r"f.*: Not a directory; a file is in the way"),
]


def _setup(d: Path, files: dict[str, Any], repo_root: Path) -> None:
    for rel, content in files.items():
        if rel == "project":
            from tests.builder.firmware import make_project

            make_project(d, ["bread-compact-wifi.yaml"])
            continue
        path = d / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str) and content.startswith("symlink:"):
            path.symlink_to(content.removeprefix("symlink:"))
        elif isinstance(content, str) and content.startswith("png:"):
            from PIL import Image

            w, h = (int(x) for x in content.removeprefix("png:").split("x"))
            Image.new("RGBA", (w, h), (255, 0, 0, 255)).save(path, format="PNG")
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.mark.parametrize(("files", "argv", "code", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_cli_input(tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str], files: dict[str, Any], argv: list[str], code: int,
                           expected: str) -> None:
    _setup(tmp_path, files, repo_root)
    monkeypatch.chdir(tmp_path)
    args = [a.replace("{d}", str(tmp_path)).replace("{repo}", str(repo_root)) for a in argv]
    got, _out, err = run_cli(args, capsys)
    assert "Traceback" not in err, err
    assert got == code, (got, err)
    assert any(re.search(expected, line) for line in err.splitlines()), err
    if code:
        assert_clean_failure(got, err, expected)


def test_broken_shared_partition_csv_is_reported_once_at_its_line(tmp_path: Path, repo_root: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from tests.model.factory import make_board_tree

    boards = make_board_tree(tmp_path, repo_root)
    csv = boards / "partitions" / "v2" / "16m.csv"
    lines = csv.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    lines[row] = lines[row].split(",")[0] + ", data, nvs, , twelve"
    csv.write_text("\n".join(lines) + "\n")
    code, _out, err = run_cli(["boards", "check", "--boards", str(boards)], capsys)
    assert code == 1 and "Traceback" not in err
    hits = [line for line in err.splitlines() if "16m.csv" in line]
    assert len(hits) == 1, err  # three variants share the table: one line, at the CSV row
    assert re.search(rf"16m\.csv:{row + 1}: invalid size 'twelve'", hits[0]), hits


def test_select_on_the_work_tree_includes_untracked_board_files(tmp_path: Path, repo_root: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    import json
    import subprocess

    from tests.model.factory import make_board_tree

    repo = tmp_path / "repo"
    boards = make_board_tree(repo, repo_root)

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.email=t@example.invalid", "-c", "user.name=t", "add", "-A")
    git("-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "base")
    new = (boards / "demo-wifi.yaml").read_text().replace("demo-wifi", "new-wifi").replace(
        "DEMO_WIFI", "NEW_WIFI").replace("Demo Wi-Fi Board", "New Wi-Fi Board").replace("target_default: true",
                                                                                        "target_default: false")
    (boards / "new-wifi.yaml").write_text(new)  # written, not yet `git add`ed
    code, out, err = run_cli(["matrix", "select", "--boards", str(boards), "--repo", str(repo), "--base", "HEAD",
                              "--json"], capsys)
    assert code == 0, err
    assert [v["full_name"] for v in json.loads(out)["variants"]] == ["new-wifi", "new-wifi-64"]
