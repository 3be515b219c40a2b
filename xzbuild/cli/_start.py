"""The console entry point: serves a cached `matrix list --json` before the CLI is even imported.

A CI job asks for the listing on every run; importing click and the board model costs more than the
answer. When the command line is exactly a plain `matrix list --json` (the options below, nothing else)
and `xzbuild.matrix.cache` holds a valid entry for the current board files, code and arguments, its bytes
are written and nothing else loads. Any other command line, a miss, or a disabled cache runs the full CLI
(`xzbuild.cli.main`), which computes the listing and stores it for the next run.
"""

from __future__ import annotations

import sys

# Options of `matrix list` the fast path understands: value options and flags (all others, `--shard`,
# `--cost-history`, `--help`, take the full CLI).
# The deprecated `--idf VERSION` spelling takes the full CLI, which prints its deprecation note.
_VALUES = {"--boards": "boards", "--idf-version": "idf", "--board": "board", "--target": "target"}
_FLAGS = {"--json": "json", "--all": "include_excluded", "--include-excluded": "include_excluded",
          "--extra": "extra", "--cache": "cache"}


def fast_listing_args(argv: list[str]) -> dict[str, str | bool] | None:
    """The options of a plain `matrix list --json ...` command line, or None for anything else."""
    if argv[:2] != ["matrix", "list"]:
        return None
    opts: dict[str, str | bool] = {}
    rest = argv[2:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        name, eq, value = arg.partition("=")
        if name in _VALUES:
            if not eq:
                if i + 1 >= len(rest):
                    return None
                i += 1
                value = rest[i]
            if not value:
                return None  # an empty path or version: let click say what it makes of it
            opts[_VALUES[name]] = value
        elif arg in _FLAGS:
            opts[_FLAGS[arg]] = True
        else:
            return None
        i += 1
    return opts if opts.get("json") else None


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
    boards = text("boards") or os.environ.get(ENV) or str(find_boards_dir() or "boards")
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
