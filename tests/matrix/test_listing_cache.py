"""The `matrix list --json` cache: a stale or corrupt entry is a miss, never output; hits skip the CLI."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from xzbuild.cli import _start
from xzbuild.cli._start import fast_listing_args
from xzbuild.cli.main import cli
from xzbuild.matrix import cache

KEY = "0123456789abcdef0123456789abcdef"
TEXT = '[{"board": "x", "name": "\\u4f60"}]\n'
GOOD = cache.encode_entry(KEY, TEXT)


def _swap_payload(data: bytes, payload: bytes) -> bytes:
    return data.partition(b"\n")[0] + b"\n" + payload


# (case, cache file bytes): every one must read as a miss for KEY.
CORRUPT = [
    ("empty", b""),
    ("header only, no newline", GOOD.partition(b"\n")[0]),
    ("truncated payload", GOOD[:-5]),
    ("one payload byte changed", GOOD[:-3] + b"X" + GOOD[-2:]),
    ("payload appended to", GOOD + b"[]\n"),
    ("other listing, same header", _swap_payload(GOOD, b'[{"board": "y", "name": "z"}]\n')),
    ("written for another key", cache.encode_entry("f" * 32, TEXT)),
    ("other format version", GOOD.replace(b"xzbuild-list-cache 1", b"xzbuild-list-cache 2", 1)),
    ("plain JSON (an old-style entry)", TEXT.encode()),
    ("not UTF-8, hash matching", b"xzbuild-list-cache 1 %s 1 %s\n\xff" % (
        KEY.encode(), hashlib.sha256(b"\xff").hexdigest().encode())),
    ("header with an extra field", GOOD.replace(b"\n", b" extra\n", 1)),
]


def test_entry_round_trips() -> None:
    assert cache.decode_entry(GOOD, KEY) == TEXT


@pytest.mark.parametrize(("case", "data"), CORRUPT, ids=[c for c, _ in CORRUPT])
def test_corrupt_or_foreign_entries_are_misses(case: str, data: bytes) -> None:
    assert cache.decode_entry(data, KEY) is None, case


@settings(max_examples=300, deadline=None)
@given(text=st.text(), cut=st.integers(min_value=0), flips=st.lists(st.tuples(st.integers(min_value=0),
                                                                             st.integers(1, 255)), max_size=4))
def test_any_damage_reads_as_the_original_or_a_miss(text: str, cut: int, flips: list[tuple[int, int]]) -> None:
    data = bytearray(cache.encode_entry(KEY, text))
    for pos, xor in flips:
        data[pos % len(data)] ^= xor
    damaged = bytes(data[:len(data) - cut % (len(data) + 1)])
    assert cache.decode_entry(damaged, KEY) in (text, None)
    assert cache.decode_entry(cache.encode_entry(KEY, text), KEY) == text


def _edit(boards: Path, how: str) -> None:
    """One change to a copy of the board set; each must change the key."""
    board = boards / "bread-compact-wifi.yaml"
    if how == "edit a byte":
        board.write_bytes(board.read_bytes().replace(b"Bread Compact Wi-Fi", b"Bread Compact Wi-Fj", 1))
    elif how == "add a file":
        (boards / "zz-new.yaml").write_text(board.read_text(encoding="utf-8"), encoding="utf-8")
    elif how == "rename a file":
        board.rename(boards / "bread-compact-wifi2.yaml")
    elif how == "delete a file":
        board.unlink()
    elif how == "edit a partition table":
        table = next(boards.rglob("*.csv"))
        table.write_text(table.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    elif how == "same size, new content":
        data = bytearray(board.read_bytes())
        data[-2] = ord("x") if data[-2] != ord("x") else ord("y")
        stat = board.stat()
        board.write_bytes(bytes(data))
        os.utime(board, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and mtime: content decides


EDITS = ["edit a byte", "add a file", "rename a file", "delete a file", "edit a partition table",
         "same size, new content"]


@pytest.fixture
def boards(tmp_path: Path, repo_root: Path) -> Path:
    copy = tmp_path / "repo" / "boards"
    shutil.copytree(repo_root / "boards", copy)
    return copy


@pytest.mark.parametrize("how", EDITS)
def test_every_input_change_changes_the_key(boards: Path, how: str) -> None:
    args = cache.listing_args("6.0.2", None, None, False, False)
    before = cache.fingerprint(str(boards), args)
    assert cache.fingerprint(str(boards), args) == before
    _edit(boards, how)
    assert cache.fingerprint(str(boards), args) != before, how


@pytest.mark.parametrize("changed", [
    ("6.1", None, None, False, False), ("6.0.2", "bread-compact-wifi", None, False, False),
    ("6.0.2", None, "esp32s3", False, False), ("6.0.2", None, None, True, False),
    ("6.0.2", None, None, False, True)])
def test_every_argument_changes_the_key(boards: Path, changed: tuple[str, str | None, str | None, bool, bool]) -> None:
    base = cache.fingerprint(str(boards), cache.listing_args("6.0.2", None, None, False, False))
    assert cache.fingerprint(str(boards), cache.listing_args(*changed)) != base


# (argv after `xzbuild`, options the fast path serves (click's parameter names), or None: the full CLI runs)
ARGV = [
    (["matrix", "list", "--json"], {"as_json": True}),
    (["matrix", "list", "--json", "--boards", "b", "--idf-version=6.1", "--all", "--extra", "--cache"],
     {"as_json": True, "boards_dir": "b", "idf": "6.1", "include_excluded": True, "extra": True, "cache": True}),
    (["matrix", "list", "--board", "x/y", "--json", "--target", "esp32"],
     {"as_json": True, "board": "x/y", "target": "esp32"}),
    (["matrix", "list", "--json", "--idf-version", "6.0", "--idf-version", "6.1"], {"as_json": True, "idf": "6.1"}),
    (["matrix", "list", "--json", "--no-cache", "--cache"], {"as_json": True, "cache": True}),  # the last wins
    (["matrix", "list", "--json", "--idf", "6.0.2"], None),  # deprecated spelling: the CLI prints its note
    (["matrix", "list"], None),  # the table
    (["matrix", "list", "--json", "--no-cache"], None),
    (["matrix", "list", "--json", "--shard", "1/2"], None),
    (["matrix", "list", "--json", "--cost-history", "h.json"], None),
    (["matrix", "list", "--json", "--help"], None),
    (["matrix", "list", "--json", "-h"], None),
    (["matrix", "list", "--json", "--boards"], None),
    (["matrix", "list", "--json", "--boards="], None),
    (["matrix", "list", "--json", "--boards=", "--boards", "b"], {"as_json": True, "boards_dir": "b"}),
    (["matrix", "list", "--json=yes"], None),  # click: "Option '--json' does not take a value"
    (["matrix", "list", "--jso"], None),  # click matches no abbreviation
    (["matrix", "list", "--json", "extra-arg"], None),
    (["matrix", "list", "--json", "--", "x"], None),
    (["matrix", "list", "--json", "--"], {"as_json": True}),  # click: the end of the options, nothing after
    (["matrix", "select", "--json"], None),
    (["--json", "matrix", "list"], None),
    ([], None),
]


@pytest.mark.parametrize(("argv", "expected"), ARGV, ids=[" ".join(a) or "(none)" for a, _ in ARGV])
def test_fast_path_takes_only_plain_listings(argv: list[str], expected: dict[str, object] | None) -> None:
    assert fast_listing_args(argv) == expected


def _list_command() -> click.Command:
    return cli.get_command(click.Context(cli), "matrix").commands["list"]  # type: ignore[union-attr]


def test_fast_path_table_is_clicks_declarations() -> None:
    """The scanner's table is click's own declaration of `matrix list`, written out (re-derive it on change)."""
    derived = _start.option_table(_list_command().params)
    assert derived == _start.LIST_OPTIONS, f"set LIST_OPTIONS in xzbuild/cli/_start.py to {derived!r}"


def test_every_listing_option_is_keyed_or_sent_to_the_cli() -> None:
    """Each parameter of `matrix list` is in the cache key (listing_args' own parameters), locates or enables
    the lookup (--boards, --json, --cache), or takes the full CLI: a new option has to be placed."""
    keyed = set(inspect.signature(cache.listing_args).parameters) - {"shard", "history"}
    names = {p.name for p in _list_command().params}
    assert names == keyed | {"boards_dir", "as_json", "cache"} | _start.FULL_CLI_ONLY


def _click_reading(argv: list[str]) -> dict[str, object] | None:
    """What click's own parser makes of `matrix list ARGV`, narrowed to what the fast path may serve: the
    options given (raw values, before types and callbacks), or None when click refuses the line (a usage
    error, a positional token) or it is no cacheable listing (no --json, --no-cache last, an option outside the
    key, an empty value, help)."""
    command = _list_command()
    root = click.Context(cli, info_name="xzbuild", **cli.context_settings)  # -h/--help, as `xzbuild` runs it
    ctx = click.Context(command, info_name="list", parent=click.Context(command, info_name="matrix", parent=root))
    parser = command.make_parser(ctx)
    try:
        opts, args, _ = parser.parse_args(list(argv))
    except click.UsageError:
        return None
    helped = command.get_help_option(ctx)  # -h/--help: not in command.params, so not in the scanner's table
    if helped is not None and helped.name in opts:
        return None
    if args or opts.get("as_json") is not True or opts.get("cache") is False:
        return None
    if _start.FULL_CLI_ONLY & opts.keys() or "" in opts.values():
        return None
    return opts


# click's spellings of `matrix list`'s options (not the scanner's table), each also cut short by one letter
_SPELLINGS = sorted({o for p in _list_command().params for o in (*p.opts, *p.secondary_opts)})
_TOKENS = sorted({*_SPELLINGS, *(o[:-1] for o in _SPELLINGS), "--help", "-h", "--", "-", "--json=1",
                  "--no-cache=", "x", "6.1", "esp32", "a=b", ""})


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_TOKENS), st.sampled_from(["--json"]), st.builds(
    lambda o, v: f"{o}={v}", st.sampled_from(_SPELLINGS), st.sampled_from(["", "6.1", "x", "--json", "a=b"])),
    st.text(max_size=4)), max_size=7))
def test_fast_path_reads_exactly_what_click_reads(argv: list[str]) -> None:
    """Any command line: the fast path serves it iff click's parser reads it as a cacheable listing, with the
    same values. (The cache only holds listings click computed, so a line read differently could be served a
    listing click never meant for it.)"""
    assert fast_listing_args(["matrix", "list", *argv]) == _click_reading(argv)


def test_default_idf_agrees_with_the_cli_and_the_library() -> None:
    from xzbuild.matrix.entries import DEFAULT_IDF

    idf_default = next(p.default for p in _list_command().params if p.name == "idf")
    assert cache.DEFAULT_IDF == DEFAULT_IDF == idf_default


_ENTRY = """
import sys
from xzbuild.cli._start import main
code = main()
loaded = sorted(m for m in sys.modules if m == "click" or m.startswith(("xzbuild.model", "xzbuild.cli.main")))
print("LOADED", *loaded, file=sys.stderr)
sys.exit(code)
"""


def _console(args: list[str], cwd: Path, **env: str) -> tuple[str, list[str]]:
    """Run the console entry point (`xzbuild ...`) in a fresh interpreter: (stdout, heavy modules loaded)."""
    environ = {k: v for k, v in os.environ.items() if k != "XZBUILD_NO_CACHE"} | env
    proc = subprocess.run([sys.executable, "-c", _ENTRY, *args], cwd=cwd, env=environ, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    loaded = next(line for line in proc.stderr.splitlines() if line.startswith("LOADED")).split()[1:]
    return proc.stdout, loaded


def test_console_hit_skips_the_cli_and_damage_is_recomputed(boards: Path, repo_root: Path) -> None:
    args = ["matrix", "list", "--json", "--boards", str(boards)]
    reference = CliRunner(env={"XZBUILD_NO_CACHE": "1"}).invoke(cli, args).output
    first, loaded = _console(args, boards.parent)
    assert first == reference and "click" in loaded  # a miss: the full CLI computed and stored it
    [entry] = (boards.parent / ".xzbuild-cache" / "matrix").glob("list-*.json")
    second, loaded = _console(args, boards.parent)
    assert second == reference and loaded == []  # a hit: neither click nor the board model loaded
    # A damaged entry (same header, another listing) is a miss: recomputed, then stored intact again.
    entry.write_bytes(_swap_payload(entry.read_bytes(), b"[]\n"))
    third, loaded = _console(args, boards.parent)
    assert third == reference and "click" in loaded
    assert cache.decode_entry(entry.read_bytes(), entry.stem.removeprefix("list-")) == reference
    # A stale entry (the board files changed since) is never served.
    _edit(boards, "same size, new content")
    fresh = CliRunner(env={"XZBUILD_NO_CACHE": "1"}).invoke(cli, args).output
    fourth, loaded = _console(args, boards.parent)
    assert fourth == fresh and "click" in loaded
    # XZBUILD_NO_CACHE=1 always runs the full CLI.
    fifth, loaded = _console(args, boards.parent, XZBUILD_NO_CACHE="1")
    assert fifth == fresh and "click" in loaded


def test_listing_from_cache_equals_upstreams_bytes(boards: Path, shared_fixtures: Path) -> None:
    golden = json.loads((shared_fixtures / "upstream" / "list-boards-idf-6.0.2.json").read_text(encoding="utf-8"))
    args = ["matrix", "list", "--json", "--idf-version", "6.0.2", "--boards", str(boards)]
    _console(args, boards.parent)
    hit, loaded = _console(args, boards.parent)
    assert loaded == [] and hit == json.dumps(golden) + "\n"


def test_key_covers_every_module_the_listing_runs() -> None:
    """Each xzbuild module imported to compute a listing lies under one of the cache key's code entries, so
    editing it (core's readers included) changes the key: a stale listing can't be served after an upgrade."""
    code = ("import sys, json; from xzbuild.matrix.entries import list_variants; from xzbuild.model import load_boards;"
            "print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items()"
            " if n.split('.')[0] == 'xzbuild' and getattr(m, '__file__', None))))")
    files = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                      timeout=120).stdout)
    package = Path(cache.__file__).resolve().parents[1]
    roots = [package / entry for entry in cache._CODE]
    assert all(r.exists() for r in roots), [str(r) for r in roots if not r.exists()]
    uncovered = [f for f in map(Path, files) if not any(Path(f) == r or r in Path(f).parents for r in roots)]
    assert not uncovered, f"listing modules outside the cache key: {uncovered}"
