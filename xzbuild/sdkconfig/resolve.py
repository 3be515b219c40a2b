"""A variant's resolved sdkconfig: its release assignments evaluated through the firmware's Kconfig.

What reaches a compiler is not the fragment a build passes to idf.py but what Kconfig makes of it: ESP-IDF
drops lines whose dependencies fail and fills in defaults. The firmware's ``main/Kconfig.projbuild`` is
evaluated with esp-idf-kconfig (``xzbuild.sdkconfig.evaluate.KconfigEvaluator``, ESP-IDF's own symbols
stubbed), on top of the firmware's ``sdkconfig.defaults`` layers, the variant's board line and append, and
its expanded build options (as `matrix build` writes them). Symbols only ESP-IDF's components declare keep
the value the layers give them.

Results are memoised by content (Kconfig text, defaults files, target, fragment), so a replay over many
commits evaluates each distinct configuration once.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from xzbuild.core import sdkconfig_text
from xzbuild.core.errors import UserError
from xzbuild.core.sdkdefaults import defaults_files
from xzbuild.sdkconfig.build_options import build_option_definitions
from xzbuild.sdkconfig.evaluate import KconfigEvaluator
from xzbuild.sdkconfig.fragment import board_lines, expand_build_options, normalize_build_options

if TYPE_CHECKING:
    from xzbuild.model import FirmwareFacts, Variant


class Buildable(Protocol):
    """What resolving needs of one build of a variant: ``xzbuild.matrix.entries.MatrixEntry`` is one."""

    @property
    def target(self) -> str: ...

    @property
    def variant(self) -> Variant | None: ...

    @property
    def firmware(self) -> FirmwareFacts | None: ...


@dataclass(frozen=True)
class ResolvedConfig:
    """Symbol values (no ``CONFIG_`` prefix, strings unquoted) of one variant after Kconfig."""

    values: dict[str, str]

    def get(self, symbol: str) -> str | None:
        """The value of ``CONFIG_<symbol>`` or ``<symbol>``; None where nothing sets it."""
        return self.values.get(symbol.removeprefix("CONFIG_"))


def release_config(entry: Buildable) -> dict[str, str] | None:
    """The sdkconfig assignments a release build of ``entry`` makes: the layered defaults and the variant's
    append, plus what its build options expand to (as `matrix build` does). None when unknown."""
    variant = entry.variant
    if variant is None:
        return None
    config = dict(variant.effective_sdkconfig)
    if variant.build_options:
        if entry.firmware is None:
            return None
        try:
            definitions = build_option_definitions(variant, entry.firmware)
            selected = normalize_build_options(definitions, {})
            lines = expand_build_options(definitions, selected, sdkconfig_text.values(variant.sdkconfig_append))
        except UserError:
            return None
        config.update(sdkconfig_text.values(lines))
    return config


def release_lines(entry: Buildable) -> list[str]:
    """The ``CONFIG_X=v`` lines a release build of ``entry`` gives idf.py (board line, append, options)."""
    variant = entry.variant
    if variant is None:
        return []
    lines = board_lines(variant)[1] if variant.kconfig is not None else list(variant.sdkconfig_append)
    return lines + option_lines(entry)


def option_lines(entry: Buildable) -> list[str]:
    """The lines ``entry``'s build options expand to that the layered defaults and the append do not give."""
    variant = entry.variant
    if variant is None:
        return []
    config = release_config(entry) or {}
    base = variant.effective_sdkconfig
    return [f"{key}={value}" for key, value in config.items() if base.get(key) != value]


class Resolver:
    """Resolves variants against one firmware tree's Kconfig and defaults (text given or read from disk)."""

    def __init__(self, firmware: Path, kconfig_text: str | None = None) -> None:
        self.firmware = firmware
        path = firmware / "main" / "Kconfig.projbuild"
        self.kconfig_text = kconfig_text if kconfig_text is not None else (
            path.read_text(encoding="utf-8") if path.is_file() else "")
        self._evaluator: KconfigEvaluator | None = None
        self._memo: dict[str, ResolvedConfig] = {}
        self._owned: tempfile.TemporaryDirectory[str] | None = None

    @classmethod
    def from_texts(cls, kconfig_text: str, defaults: Mapping[str, str | None]) -> Resolver:
        """A resolver over given texts (a revision's Kconfig and ``sdkconfig.defaults*`` files, by name),
        for comparing a change's base with its head without a checkout."""
        tmp = tempfile.TemporaryDirectory(prefix="xzbuild-resolve-")
        for name, text in defaults.items():
            if text is not None:
                (Path(tmp.name) / name).write_text(text, encoding="utf-8")
        resolver = cls(Path(tmp.name), kconfig_text)
        resolver._owned = tmp
        return resolver

    def _key(self, target: str, lines: Sequence[str]) -> str:
        digest = hashlib.sha256(self.kconfig_text.encode())
        for file in defaults_files(self.firmware, target):
            digest.update(file.name.encode() + b"\0" + file.read_bytes())
        digest.update(target.encode() + b"\0" + "\n".join(lines).encode())
        return digest.hexdigest()

    def resolve_lines(self, target: str, lines: Sequence[str]) -> ResolvedConfig:
        """Evaluate ``lines`` on ``target``."""
        key = self._key(target, lines)
        if key not in self._memo:
            if self._evaluator is None:
                self._evaluator = KconfigEvaluator(self.kconfig_text, self.firmware)
            evaluation = self._evaluator.evaluate(target, list(lines))
            # ESP-IDF always defines CONFIG_IDF_TARGET (the target's name); a side of a change may build a
            # variant for another target than today's board file names, and compile classes key on this one.
            self._memo[key] = ResolvedConfig({**dict(evaluation.values), "IDF_TARGET": target})
        return self._memo[key]

    def resolve(self, entry: Buildable) -> ResolvedConfig:
        """The resolved sdkconfig of one matrix entry."""
        return self.resolve_lines(entry.target, release_lines(entry))

    def close(self) -> None:
        """Remove the evaluator's temporary Kconfig files."""
        if self._evaluator is not None:
            self._evaluator.close()
        self._evaluator = None
        if self._owned is not None:
            self._owned.cleanup()
            self._owned = None

    def __enter__(self) -> Resolver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
