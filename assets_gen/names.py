"""Name rules shared by every table in a bundle (container members, srmodels models and files, emoji).

The firmware reads names as C strings out of fixed 32-byte fields, so a name must be ASCII (one byte per
character) and at most 31 bytes (room for the terminating NUL). Upstream truncates longer names silently,
which shifts or corrupts the table; we refuse them instead.
"""

from __future__ import annotations

from pathlib import Path

from xzbuild.core.errors import Location, UserError

FIELD_LEN = 32
MAX_NAME_BYTES = FIELD_LEN - 1


def check_name(name: str, what: str, where: Location | None = None) -> bytes:
    """Return ``name`` as the bytes stored in a 32-byte field, or raise UserError if it cannot be stored."""
    if not name:
        raise UserError(f"{what}: empty name; give the file a name", where)
    if not name.isascii() or not name.isprintable():
        raise UserError(
            f"{what} {name!r}: names must be printable ASCII (the firmware reads them as byte strings); rename it",
            where,
        )
    if "/" in name or "\\" in name:
        raise UserError(f"{what} {name!r}: names must not contain path separators", where)
    raw = name.encode("ascii")
    if len(raw) > MAX_NAME_BYTES:
        raise UserError(
            f"{what} {name!r}: {len(raw)} bytes, the limit is {MAX_NAME_BYTES} (32-byte field with its NUL); "
            "use a shorter name",
            where,
        )
    return raw


def pad_name(raw: bytes) -> bytes:
    """NUL-pad an already checked name to the 32-byte field."""
    return raw.ljust(FIELD_LEN, b"\0")


def field_name(field: bytes) -> tuple[str, bool]:
    """Decode a 32-byte name field the way C does; returns (name, terminated within the field)."""
    end = field.find(b"\0")
    terminated = end >= 0
    raw = field if end < 0 else field[:end]
    return raw.decode("latin-1"), terminated


def walk_files(directory: Path) -> list[Path]:
    """Every regular file under ``directory`` in the order of a sorted top-down ``os.walk`` (the order the
    reference bundles were made with): a directory's own files first, then each subdirectory in turn."""

    def key(path: Path) -> tuple[tuple[int, str], ...]:
        parts = path.relative_to(directory).parts
        return tuple((1, d) for d in parts[:-1]) + ((0, parts[-1]),)

    from xzbuild.core.fsutil import link_escape

    found = []
    for p in directory.rglob("*"):
        problem = link_escape(p, directory)
        if problem is not None:
            from xzbuild.core.errors import Location, UserError

            raise UserError(problem, Location(str(p)))
        if p.is_file():
            found.append(p)
    return sorted(found, key=key)
