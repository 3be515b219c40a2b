"""Read the board-related parts of upstream ``main/Kconfig.projbuild`` (facts only, stored verbatim)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_STARTERS = re.compile(r"^(choice|menu|config|menuconfig)\b")
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
        line = lines[i]
        m = _STARTERS.match(line)
        if not m:
            i += 1
            continue
        start = i
        if m.group(1) in ("choice", "menu"):
            end_word = "endchoice" if m.group(1) == "choice" else "endmenu"
            depth = 0
            while i < len(lines):
                word = lines[i].strip().split(" ", 1)[0]
                if re.match(r"^(choice|menu)\b", lines[i].strip()):
                    depth += 1
                elif word in ("endchoice", "endmenu"):
                    depth -= 1
                    if depth == 0 and not lines[i].startswith(" ") and word == end_word:
                        break
                i += 1
            i += 1
        else:
            i += 1
            while i < len(lines) and (not lines[i] or lines[i].startswith((" ", "\t"))):
                i += 1
        body = lines[start:i]
        while body and not body[-1].strip():
            body.pop()
        blocks.append((line, start + 1, body))
    return blocks


def _depends(body: list[str]) -> str:
    """The block's own ``depends on`` expression (first one, continuation lines joined)."""
    text = "\n".join(body[1:])
    m = re.search(r"^\s*depends on\s+((?:.*\\\n)*.*)$", text, re.MULTILINE)
    return " ".join(m.group(1).replace("\\\n", " ").split()) if m else ""


def _choice_entries(body: list[str]) -> list[tuple[str, str]]:
    entries = []
    for i, line in enumerate(body):
        m = re.match(r"^\s*config\s+(\w+)\s*$", line)
        if m:
            for nxt in body[i + 1 : i + 4]:
                lm = re.match(r'^\s*bool\s+"([^"]*)"', nxt)
                if lm:
                    entries.append((m.group(1), lm.group(1)))
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
            for i, line in enumerate(body):
                if re.match(r"^\s*config\s+USE_EMOTE_MESSAGE_STYLE\s*$", line):
                    rest = []
                    for nxt in body[i + 1 :]:
                        if re.match(r"^\s*(config|endchoice)\b", nxt):
                            break
                        rest.append(nxt)
                    facts.global_lists["USE_EMOTE_MESSAGE_STYLE"] = list(dict.fromkeys(_BOARD_SYM.findall("\n".join(rest))))
            continue
        if head.startswith("config") and name == "USE_DEVICE_AEC":
            facts.global_lists["USE_DEVICE_AEC"] = list(dict.fromkeys(_BOARD_SYM.findall("\n".join(body))))
            continue
        if head.startswith("choice") and any(re.match(r"^\s*config\s+LANGUAGE_", b) for b in body):
            facts.languages = dict(_choice_entries(body))
            continue
        dep = _depends(body)
        symbols = list(dict.fromkeys(_BOARD_SYM.findall(dep)))
        inherited = [s for sym, owners in private_syms.items() if re.search(rf"\b{sym}\b", dep) for s in owners]
        if head.startswith(("choice", "menu")) and (symbols or inherited):
            owners = list(dict.fromkeys(symbols + inherited))
            facts.private_blocks.append({"name": name, "symbols": owners, "text": "\n".join(body)})
            for sym in re.findall(r"^\s*config\s+(\w+)", "\n".join(body), re.MULTILINE):
                private_syms[sym] = owners
    return facts


_ENTRY = re.compile(r"^[ \t]*config[ \t]+(BOARD_TYPE_[A-Za-z0-9_]+)[ \t]*$")
_LABEL = re.compile(r'^[ \t]*bool[ \t]+"(.*)"[ \t]*$')
_TARGET = re.compile(r"^[ \t]*depends[ \t]+on[ \t]+IDF_TARGET_(\w+)[ \t]*$")
_ENTRY_END = re.compile(r"^[ \t]*(config|menuconfig|choice|endchoice|default|prompt|help|if|endif|source)\b")


def _board_choice(facts: KconfigFacts, body: list[str], first_line: int) -> None:
    """Entries of ``choice BOARD_TYPE`` in any indentation (tabs or spaces, trailing blanks): ``config X``,
    ``bool "label"`` and, from mid-2025 on, ``depends on IDF_TARGET_Y`` (older trees have no target line:
    the target then comes from the board's config.json)."""
    for line in body:
        m = re.match(r"^[ \t]*default[ \t]+(BOARD_TYPE_\w+)[ \t]+if[ \t]+IDF_TARGET_(\w+)[ \t]*$", line)
        if m:
            facts.target_defaults[m.group(2).lower()] = m.group(1)
        plain = re.match(r"^[ \t]*default[ \t]+(BOARD_TYPE_\w+)[ \t]*$", line)
        if plain:
            facts.plain_default = plain.group(1)  # trees before the per-target defaults
    i = 0
    while i < len(body):
        m = _ENTRY.match(body[i])
        if not m:
            if re.match(r"^[ \t]*config[ \t]+", body[i]):
                facts.problems.append(f"Kconfig.projbuild:{first_line + i}: unexpected line in BOARD_TYPE choice: "
                                      f"{body[i].strip()!r}; it was skipped")
            i += 1
            continue
        start = i
        label: str | None = None
        target: str | None = None
        i += 1
        while i < len(body) and body[i].strip() and not _ENTRY_END.match(body[i]):
            lm, tm = _LABEL.match(body[i]), _TARGET.match(body[i])
            if lm and label is None:
                label = lm.group(1)
            elif tm and target is None:
                target = tm.group(1).lower()
            else:
                facts.problems.append(f"Kconfig.projbuild:{first_line + i}: {m.group(1)}: line {body[i].strip()!r} "
                                      "is not modelled; it was skipped")
            i += 1
        if label is None:
            facts.problems.append(f"Kconfig.projbuild:{first_line + start}: entry {m.group(1)} has no 'bool \"label\"' "
                                  "line; it was skipped")
            continue
        facts.entries.append(BoardChoiceEntry(m.group(1), label, target, first_line + start))
