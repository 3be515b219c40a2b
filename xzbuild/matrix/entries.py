"""The release matrix: one `MatrixEntry` per variant, with IDF gating applied as a status plus a reason."""

from __future__ import annotations

import difflib
import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xzbuild.core.errors import UserError

if TYPE_CHECKING:
    from xzbuild.model import BoardSet, FirmwareFacts, Variant

DEFAULT_IDF = "6.0.2"
"""The IDF version a listing uses when none is given (upstream's CI push matrix and listing fallback)."""

_IDF_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")


class Status(enum.StrEnum):
    """Whether a variant is part of the matrix for the requested IDF version."""

    ENABLED = "enabled"
    DISABLED = "disabled"


@dataclass(frozen=True)
class MatrixEntry:
    """One release build of one board at one ESP-IDF version."""

    board: str
    name: str
    full_name: str
    type: str
    target: str
    config: str  # Kconfig symbol with the CONFIG_ prefix
    display_name: str
    idf: str  # the IDF version this entry was listed for
    idf_requirement: str | None  # the variant's specifier set, e.g. ">=6.1"
    status: Status
    reason: str | None
    preview: bool = False
    chip_variant: str | None = None
    variant: Variant | None = field(default=None, compare=False, repr=False, hash=False)
    firmware: FirmwareFacts | None = field(default=None, compare=False, repr=False, hash=False)

    @property
    def enabled(self) -> bool:
        """True if the variant is built at this IDF version."""
        return self.status is Status.ENABLED

    def to_upstream_record(self) -> dict[str, Any]:
        """The record upstream's ``build.py --list-boards --json`` prints for this variant (same keys, order)."""
        from xzbuild.sdkconfig.build_options import build_option_definitions

        if self.variant is None or self.firmware is None:
            raise ValueError(f"{self.full_name}: entry has no model variant to derive the record from")
        return {
            "board": self.board,
            "name": self.name,
            "full_name": self.full_name,
            "type": self.type,
            "target": self.target,
            "config": self.config,
            "display_name": self.display_name,
            "wake_word_supported": bool(self.variant.wake_word_supported),
            "build_options": build_option_definitions(self.variant, self.firmware),
        }

    def to_json(self) -> dict[str, Any]:
        """The upstream record plus xzbuild's extra keys (IDF version, status, reason, preview)."""
        record = self.to_upstream_record()
        record.update(
            idf=self.idf,
            idf_requirement=self.idf_requirement,
            status=str(self.status),
            reason=self.reason,
            preview=self.preview,
            chip_variant=self.chip_variant,
        )
        return record


def normalize_idf(version: str) -> str:
    """``"v6.1"`` → ``"6.1.0"``; raise UserError for anything that is not MAJOR.MINOR[.PATCH]."""
    match = _IDF_RE.match(version.strip())
    if not match:
        raise UserError(f"--idf-version {version!r}: expected an ESP-IDF version like 6.0.2 or v6.1")
    major, minor, patch = match.groups()
    return f"{int(major)}.{int(minor)}.{int(patch or 0)}"


def describe_requirement(variant: Variant) -> str:
    """``">=6.1"`` → ``"IDF >= 6.1"``: the board file's own spelling when known, else the specifier set."""
    text = getattr(variant, "idf_version_text", None)
    if text:
        parts = [text.strip()]
    else:
        parts = [str(s) for s in sorted(variant.idf_version or [], key=str)]
    return "IDF " + ", ".join(re.sub(r"^\s*([<>=!~]+)\s*v?", r"\1 ", p) for p in parts)


def entry_for(variant: Variant, idf: str, firmware: FirmwareFacts | None = None) -> MatrixEntry:
    """The matrix entry of one model variant at IDF version `idf` (already normalized)."""
    kconfig = variant.kconfig
    if kconfig is None:
        raise UserError(f"variant {variant.name} has no Kconfig symbol; run `xzbuild boards check`",
                        variant.location())
    requirement = variant.idf_version
    enabled = variant.supports_idf(idf)
    return MatrixEntry(
        board=variant.board.dir,
        name=variant.name,
        full_name=variant.full_name,
        type=variant.board.type,
        target=variant.target,
        config=f"CONFIG_{kconfig.symbol}",
        display_name=kconfig.label,
        idf=idf,
        idf_requirement=str(requirement) if requirement is not None else None,
        status=Status.ENABLED if enabled else Status.DISABLED,
        reason=None if enabled else f"requires {describe_requirement(variant)}",
        preview=bool(variant.board.preview),
        chip_variant=variant.chip_variant,
        variant=variant,
        firmware=firmware,
    )


def list_variants(
    board_set: BoardSet,
    idf: str = DEFAULT_IDF,
    board: str | None = None,
    target: str | None = None,
) -> list[MatrixEntry]:
    """Every variant of `board_set` as a MatrixEntry for ESP-IDF `idf`, sorted by (board, name).

    Variants the IDF version excludes are returned with ``Status.DISABLED`` and a reason
    (``"requires IDF >= 6.1"``); filter with ``[e for e in entries if e.enabled]`` for the build matrix.
    `board` (a board dir) and `target` narrow the list; unknown values raise UserError with suggestions.
    """
    version = normalize_idf(idf)
    variants = board_set.variants()
    if board is not None:
        board_set.board(board)  # raises a UserError with "did you mean" for unknown dirs
        variants = [v for v in variants if v.board.dir == board]
    if target is not None:
        known = sorted({v.target for v in board_set.variants()})
        if target not in known:
            close = difflib.get_close_matches(target, known, n=1)
            hint = f"did you mean {close[0]}?" if close else "known targets: " + ", ".join(known)
            raise UserError(f"--target {target!r}: no board has this target; {hint}")
        variants = [v for v in variants if v.target == target]
    entries = [entry_for(v, version, board_set.firmware) for v in variants]
    entries.sort(key=lambda e: (e.board, e.name))
    return entries
