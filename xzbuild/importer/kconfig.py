"""Read the board-related parts of upstream ``main/Kconfig.projbuild`` (facts only, stored verbatim)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xzbuild.core import kconfig_text

_STARTERS = ("choice", "menu", "config", "menuconfig")
_PROMPT = re.compile(r'^bool\s+"([^"]*)"')
_BOARD_SYM = re.compile(r"\b(BOARD_TYPE_[A-Za-z0-9_]+)\b")


@dataclass
class BoardChoiceEntry:
    """One ``config BOARD_TYPE_X`` of ``choice BOARD_TYPE``."""

    symbol: str
    label: str
    target: str | None  # None: no ``depends on IDF_TARGET_*`` line (trees before mid-2025)
    line: int


@dataclass
class KconfigFacts:
    """Everything the importer needs from Kconfig.projbuild."""

    entries: list[BoardChoiceEntry] = field(default_factory=list)
    target_defaults: dict[str, str] = field(default_factory=dict)
    display_models: dict[str, dict[str, object]] = field(default_factory=dict)
    global_lists: dict[str, list[str]] = field(default_factory=dict)
    private_blocks: list[dict[str, object]] = field(default_factory=list)
    languages: dict[str, str] = field(default_factory=dict)
    plain_default: str | None = None
    problems: list[str] = field(default_factory=list)


def _blocks(lines: list[str]) -> list[tuple[str, int, list[str]]]:
    """Top-level (column 0) blocks inside the outer menu: (head line, 1-based line number, lines)."""
    blocks: list[tuple[str, int, list[str]]] = []
    i = 1  # line 0 opens the outer menu
    while i < len(lines):
        found = kconfig_text.head(lines[i])
        if found is None or found[0] not in _STARTERS or lines[i][:1] in (" ", "\t"):
            i += 1
            continue
        start, i = i, kconfig_text.block_end(lines, i)
        body = lines[start:i]
        while body and not body[-1].strip():
            body.pop()
        blocks.append((lines[start], start + 1, body))
    return blocks


def _depends(body: list[str]) -> str:
    """The block's first ``depends on`` expression after its head (continuation lines joined)."""
    for entry in kconfig_text.entries("\n".join(body)):
        for option in entry.option("depends"):
            if option.words[1:2] == ("on",) and option.number > 1:
                first = option.number - 1
                joined = "\n".join(body[first : kconfig_text.continued(body, first)]).replace("\\\n", " ")
                return " ".join(joined.split()[2:])
    return ""


def _configs(body: list[str]) -> list[kconfig_text.Entry]:
    """The ``config`` entries of a block (``menuconfig`` ones are menus, not members)."""
    return [e for e in kconfig_text.entries("\n".join(body)) if e.kind == "config" and e.name]


def _choice_entries(body: list[str]) -> list[tuple[str, str]]:
    """(symbol, label) of each ``config`` whose ``bool "label"`` is within its next three lines."""
    entries = []
    for entry in _configs(body):
        if entry.rest != entry.name:
            continue
        for line in entry.body:
            lm = _PROMPT.match(line.text)
            if lm and line.number <= entry.line + 3:
                entries.append((entry.name, lm.group(1)))
                break
    return entries


def parse_kconfig(text: str) -> KconfigFacts:
    """Parse the project Kconfig; unexpected shapes are recorded in ``problems`` (never dropped silently)."""
    facts = KconfigFacts()
    lines = text.split("\n")
    private_syms: dict[str, list[str]] = {}
    for head, lineno, body in _blocks(lines):
        name = head.split(None, 1)[1].strip().strip('"') if len(head.split(None, 1)) > 1 else ""
        if head.startswith("choice") and name == "BOARD_TYPE":
            _board_choice(facts, body, lineno)
            continue
        if head.startswith("choice") and name in ("DISPLAY_OLED_TYPE", "DISPLAY_LCD_TYPE"):
            dep = _depends(body)
            default = re.search(r"^\s*default\s+(\w+)", "\n".join(body), re.MULTILINE)
            kind = "oled" if name == "DISPLAY_OLED_TYPE" else "lcd"
            facts.display_models[kind] = {
                "choice": name, "default": default.group(1) if default else "", "depends_on": dep,
                "entries": [{"symbol": s, "label": lab} for s, lab in _choice_entries(body)],
                "symbols": list(dict.fromkeys(_BOARD_SYM.findall(dep))),
            }
            continue
        if head.startswith("choice") and name == "DISPLAY_STYLE":
            for entry in _configs(body):
                if entry.rest == "USE_EMOTE_MESSAGE_STYLE":
                    rest = "\n".join(line.text for line in entry.body)
                    facts.global_lists["USE_EMOTE_MESSAGE_STYLE"] = list(dict.fromkeys(_BOARD_SYM.findall(rest)))
            continue
        if head.startswith("config") and name == "USE_DEVICE_AEC":
            facts.global_lists["USE_DEVICE_AEC"] = list(dict.fromkeys(_BOARD_SYM.findall("\n".join(body))))
            continue
        if head.startswith("choice") and any(e.name.startswith("LANGUAGE_") for e in _configs(body)):
            facts.languages = dict(_choice_entries(body))
            continue
        dep = _depends(body)
        symbols = list(dict.fromkeys(_BOARD_SYM.findall(dep)))
        inherited = [s for sym, owners in private_syms.items() if re.search(rf"\b{sym}\b", dep) for s in owners]
        if head.startswith(("choice", "menu")) and (symbols or inherited):
            owners = list(dict.fromkeys(symbols + inherited))
            facts.private_blocks.append({"name": name, "symbols": owners, "text": "\n".join(body)})
            for entry in _configs(body):
                private_syms[entry.name] = owners
    return facts


_ENTRY = re.compile(r"BOARD_TYPE_[A-Za-z0-9_]+")
_LABEL = re.compile(r'^bool[ \t]+"(.*)"$')
_TARGET = re.compile(r"^depends[ \t]+on[ \t]+IDF_TARGET_(\w+)$")
_TARGET_DEFAULT = re.compile(r"^default[ \t]+(BOARD_TYPE_\w+)[ \t]+if[ \t]+IDF_TARGET_(\w+)$")
_PLAIN_DEFAULT = re.compile(r"^default[ \t]+(BOARD_TYPE_\w+)$")
_ENTRY_END = ("default", "prompt", "help")  # an entry's modelled lines stop here (and at a blank line)


def _board_choice(facts: KconfigFacts, body: list[str], first_line: int) -> None:
    """Entries of ``choice BOARD_TYPE`` in any indentation (tabs or spaces, trailing blanks): ``config X``,
    ``bool "label"`` and, from mid-2025 on, ``depends on IDF_TARGET_Y`` (older trees have no target line:
    the target then comes from the board's config.json)."""
    found = kconfig_text.entries("\n".join(body))
    for line in (line for entry in found for line in entry.option("default")):
        if (m := _TARGET_DEFAULT.match(line.text)) is not None:
            facts.target_defaults[m.group(2).lower()] = m.group(1)
        if (plain := _PLAIN_DEFAULT.match(line.text)) is not None:
            facts.plain_default = plain.group(1)  # trees before the per-target defaults
    for entry in (e for e in found if e.kind == "config" and e.rest):
        at = first_line - 1 + entry.line
        if _ENTRY.fullmatch(entry.rest) is None:
            facts.problems.append(f"Kconfig.projbuild:{at}: unexpected line in BOARD_TYPE choice: "
                                  f"{body[entry.line - 1].strip()!r}; it was skipped")
            continue
        label: str | None = None
        target: str | None = None
        previous = entry.line
        for line in entry.body:
            if line.number != previous + 1 or line.words[:1] and line.words[0] in _ENTRY_END:
                break
            previous = line.number
            lm, tm = _LABEL.match(line.text), _TARGET.match(line.text)
            if lm and label is None:
                label = lm.group(1)
            elif tm and target is None:
                target = tm.group(1).lower()
            else:
                facts.problems.append(f"Kconfig.projbuild:{first_line - 1 + line.number}: {entry.rest}: line "
                                      f"{line.text!r} is not modelled; it was skipped")
        if label is None:
            facts.problems.append(f"Kconfig.projbuild:{at}: entry {entry.rest} has no 'bool \"label\"' "
                                  "line; it was skipped")
            continue
        facts.entries.append(BoardChoiceEntry(entry.rest, label, target, at))
