"""The console entry point: serves a cached `matrix list --json` before the CLI is even imported.

A CI job asks for the listing on every run; importing click and the board model costs more than the
answer (click alone doubles the start-up time). When the command line is a plain `matrix list --json` whose
options, read with click's own declarations (`LIST_OPTIONS`, checked against them), are all in the cache key,
and `xzbuild.matrix.cache` holds a valid entry for the current board files, code and arguments, its bytes
are written and nothing else loads. Any other command line, a miss, or a disabled cache runs the full CLI
(`xzbuild.cli.main`), which computes the listing and stores it for the next run.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing itself is not imported: this module runs before anything else
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# `matrix list`'s options exactly as click declares them (`xzbuild/cli/matrix.py`), in the form this scanner
# reads: spelling -> (click's parameter name, what the spelling does): "value" takes one value, True / False set
# a boolean flag, "other" (a multiple, counted or non-boolean option) sends the line to the full CLI. It is
# `option_table(list_cmd.params)` written out, because loading click to read it would cost more than the answer;
# tests/matrix/test_listing_cache.py fails when it differs from click's declarations (it prints the new table)
# and checks this scanner accepts exactly the command lines click's own parser reads the same way.
LIST_OPTIONS: dict[str, tuple[str, str | bool]] = {
    "--boards": ("boards_dir", "value"),
    "--idf-version": ("idf", "value"),
    "--idf": ("legacy_idf", "other"),
    "--json": ("as_json", True),
    "--board": ("board", "value"),
    "--target": ("target", "value"),
    "--all": ("include_excluded", True),
    "--include-excluded": ("include_excluded", True),
    "--extra": ("extra", True),
    "--cache": ("cache", True),
    "--no-cache": ("cache", False),
    "--shard": ("shard", "value"),
    "--cost-history": ("cost_history", "value"),
}
# Parameters the listing cache's key does not hold: giving one takes the full CLI (so does the deprecated
# `--idf VERSION`, which prints a note). Tests check every other parameter is part of the key or of the lookup.
FULL_CLI_ONLY = frozenset({"shard", "cost_history", "legacy_idf"})


def option_table(params: Iterable[Any]) -> dict[str, tuple[str, str | bool]]:
    """The scanner's table for click parameters (duck-typed, so this module never imports click)."""
    table: dict[str, tuple[str, str | bool]] = {}
    for param in params:
        if param.param_type_name != "option":
            continue  # an argument: the scanner declines every positional token anyway
        spellings = [*param.opts, *param.secondary_opts]
        if any(not s.startswith("--") for s in spellings):
            raise ValueError(f"{param.name}: the start-up scanner reads only long options ({spellings})")
        if param.is_flag and param.is_bool_flag:
            table |= {s: (param.name, True) for s in param.opts}
            table |= {s: (param.name, False) for s in param.secondary_opts}
        else:
            plain = not param.is_flag and not param.multiple and not param.count and param.nargs == 1
            table |= {s: (param.name, "value" if plain else "other") for s in spellings}
    return table


def fast_listing_args(argv: list[str]) -> dict[str, str | bool] | None:
    """The options (click's parameter names) of a plain `matrix list --json ...` command line whose listing the
    cache can hold, or None for anything else: the full CLI then parses it (and says what is wrong)."""
    if argv[:2] != ["matrix", "list"]:
        return None
    opts: dict[str, str | bool] = {}
    rest = argv[2:]
    i = 0
    while i < len(rest):
        if rest[i] == "--" and i == len(rest) - 1:
            break  # the end of the options, with no argument after it (`matrix list` takes none)
        name, eq, value = rest[i].partition("=")
        param, action = LIST_OPTIONS.get(name, ("", "other"))
        if action == "value":
            if not eq:
                if i + 1 >= len(rest):
                    return None
                i += 1
                value = rest[i]
            opts[param] = value
        elif isinstance(action, bool) and not eq:
            opts[param] = action
        else:
            return None  # unknown, positional, `--`, a flag given a value, or an option only click handles
        i += 1
    if opts.get("as_json") is not True or opts.get("cache") is False or FULL_CLI_ONLY & opts.keys():
        return None
    if "" in opts.values():
        return None  # an empty path or version (the last given): let click say what it makes of it
    return opts


def cached_listing(argv: list[str]) -> str | None:
    """The cached output for this command line, if it is a plain `matrix list --json` and the cache holds it."""
    opts = fast_listing_args(argv)
    if opts is None:
        return None
    from xzbuild.matrix.cache import DEFAULT_IDF, listing_args, lookup

    def text(name: str) -> str | None:
        value = opts.get(name)
        return value if isinstance(value, str) else None

    args = listing_args(text("idf") or DEFAULT_IDF, text("board"), text("target"),
                        bool(opts.get("include_excluded")), bool(opts.get("extra")))
    import os

    from xzbuild.core.boardsdir import ENV, find_boards_dir

    # the full CLI's --boards: explicit, $XZBUILD_BOARDS, else the nearest boards/ from here upward
    boards = text("boards_dir") or os.environ.get(ENV) or str(find_boards_dir() or "boards")
    return lookup(boards, args)[1]


def main() -> int:
    """`xzbuild`: a cached listing straight away, else the full CLI."""
    hit = cached_listing(sys.argv[1:])
    if hit is None:
        from xzbuild.cli.main import main as cli_main

        return cli_main()
    try:
        sys.stdout.write(hit)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
