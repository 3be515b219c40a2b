"""YAML loading that remembers where every node came from (line/column), for one-line error messages."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from xzbuild.core.errors import Location, UserError


@dataclass
class MarkedDoc:
    """Plain Python data of one YAML file plus the source position of every node.

    Paths are dotted keys with list indices (``variants.0.name``); ``""`` is the document root.
    ``marks`` points at values, ``key_marks`` at mapping keys (used for unknown-key errors).
    """

    path: Path
    data: Any
    marks: dict[str, tuple[int, int]] = field(default_factory=dict)
    key_marks: dict[str, tuple[int, int]] = field(default_factory=dict)
    display_path: str = ""
    skipped: tuple[str, ...] = ()  # top-level keys present in the file but only syntax-checked (see load_marked)

    def location(self, dotted: str = "", key: bool = False) -> Location:
        """Location of ``dotted``; falls back to the closest marked parent so errors always have a line."""
        table = self.key_marks if key else self.marks
        probe = dotted
        while True:
            if probe in table:
                line, col = table[probe]
                return Location(self.display_path or str(self.path), line, col)
            if probe in self.marks:
                line, col = self.marks[probe]
                return Location(self.display_path or str(self.path), line, col)
            if not probe:
                return Location(self.display_path or str(self.path), 1, 1)
            probe = probe.rsplit(".", 1)[0] if "." in probe else ""


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_.-]+$")  # dotted sub-paths may be passed as one part


_KEY_TEXT: dict[str, str] = {}  # board files repeat the same keys: quote each one once


def join(path: str, part: str | int) -> str:
    """Append one key or index to a dotted path (an empty key is shown as ``""``)."""
    text = str(part) if isinstance(part, int) else _KEY_TEXT.get(part)
    if text is None:
        text = str(part)
        if not _PLAIN_KEY.match(text):
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if len(_KEY_TEXT) < 4096:
            _KEY_TEXT[str(part)] = text
    return f"{path}.{text}" if path else text


# libyaml's parser is ~10x faster and reports the same marks; fall back to pure Python without it.
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CParser: Any = getattr(getattr(yaml, "_yaml", None), "CParser", None)  # None without libyaml: parse everything


_RESOLVED: dict[tuple[Any, Any, Any], str] = {}


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader whose constructors we call node by node."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        """The safe loader's tag for a node, memoised: board files repeat the same keys and values a lot,
        and the safe resolver has no path-dependent rules, so the answer depends only on these three."""
        key = (kind, value, implicit)
        tag = _RESOLVED.get(key)
        if tag is None:
            tag = _RESOLVED[key] = super().resolve(kind, value, implicit)
        return tag

    # The safe loader has no path-dependent resolvers; libyaml's composer calls these once per node.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        """No path resolvers: nothing to track."""

    def ascend_resolver(self) -> None:
        """No path resolvers: nothing to track."""


_STR_TAG = "tag:yaml.org,2002:str"

# Board files are hand-written text of a few KB (the largest committed one is ~30 KB); these bounds refuse
# hostile input ("billion laughs" alias bombs, multi-MB files) in milliseconds instead of exhausting memory.
MAX_FILE_BYTES = 1024 * 1024
MAX_EXPANDED_NODES = 200_000  # nodes after alias expansion; the committed boards have at most a few thousand


def _expanded_size(root: yaml.Node, limit: int, shown: str) -> int:
    """Nodes the tree under ``root`` has once aliases (and merge keys) are expanded, computed per distinct
    node, so a 1 KB alias bomb costs microseconds; refuses recursive aliases and trees over ``limit``."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        known = sizes.get(key)
        if known is not None:
            return known
        if key in active:
            raise UserError("invalid YAML: an alias refers to its own anchor (recursive structure); "
                            "write the data out", _at(node, shown))
        active.add(key)
        total = 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += size(k) + size(v)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                total += size(item)
        active.discard(key)
        if total > limit:
            raise UserError(f"YAML aliases expand to more than {limit} nodes; write the data out instead of "
                            "nesting aliases", _at(node, shown))
        sizes[key] = total
        return total

    return size(root)


def _at(node: yaml.Node, shown: str) -> Location:
    return Location(shown, node.start_mark.line + 1, node.start_mark.column + 1)


def _convert(loader: _Loader, node: yaml.Node, path: str, doc: MarkedDoc) -> Any:
    doc.marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if node.tag == _STR_TAG and isinstance(node, yaml.ScalarNode):
        return node.value  # what the str constructor returns, without its dispatch (most nodes are strings)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        loader.flatten_mapping(node)
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise UserError(
                    "mapping keys must be plain strings; write the key as text",
                    Location(doc.display_path, key_node.start_mark.line + 1, key_node.start_mark.column + 1),
                )
            key = key_node.value if key_node.tag == _STR_TAG else loader.construct_object(key_node, deep=True)
            key_text = str(key)
            child = join(path, key_text)
            if key in result:
                raise UserError(
                    f"{child}: duplicate key; remove one of the two entries",
                    Location(doc.display_path, key_node.start_mark.line + 1, key_node.start_mark.column + 1),
                )
            doc.key_marks[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = _convert(loader, value_node, child, doc)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_convert(loader, item, join(path, i), doc) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


# Characters PyYAML's reader rejects (it reports them without a line number).
_UNPRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


# Lines at column 0 (top-level keys, their "- " items, comments), searched from a newline: a literal
# first character lets the regex engine skip ahead instead of trying every position as `^` would.
_TOP_LINE = re.compile(r"\n([^ \t\n][^\n]*)")
_TOP_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?:[ \t]|$)")
_OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")  # line breaks other than \n would shift our line counts


def _without_sections(text: str, skip: Collection[str]) -> tuple[str, list[str], list[str]] | None:
    """``text`` with the top-level sections named in ``skip`` blanked out (same line count, so marks stay
    right), the kept keys and the skipped keys; None when the file is not a plain block mapping with
    unique identifier keys at column 0 (the caller then parses everything)."""
    if _CParser is None or _OTHER_BREAKS.search(text):
        return None
    starts: list[tuple[int, str]] = []
    for m in _TOP_LINE.finditer("\n" + text):
        line = m.group(1)
        if line.startswith("#") or (starts and (line == "-" or line.startswith(("- ", "-\t")))):
            continue
        if line == "..." and starts and not text[m.end() - 1:].strip():
            continue  # the document end marker PyYAML writes after a keep-chomped block scalar
        key = _TOP_KEY.match(line)
        if key is None:
            return None
        starts.append((m.start(), key.group(1)))  # m.start() is the "\n" before the line: its offset in text
    names = [name for _, name in starts]
    if not starts or len(set(names)) != len(names):
        return None
    pieces = [text[: starts[0][0]]]
    others = [pieces[0]]
    kept: list[str] = []
    skipped: list[str] = []
    for i, (start, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        blank = "\n" * text.count("\n", start, end)
        if name in skip:
            pieces.append(blank)
            others.append(text[start:end])
            skipped.append(name)
        else:
            pieces.append(text[start:end])
            others.append(blank)
            kept.append(name)
    if skipped:
        # The caller parses the kept sections; libyaml checks the syntax of the skipped ones without building
        # objects. Both are whole top-level entries, so the file parses exactly when both parts do.
        try:
            _CParser("".join(others)).raw_parse()
        except Exception:  # noqa: BLE001 - any failure: the full parse reports it with its position
            return None
    return "".join(pieces), kept, skipped


def load_marked(path: Path, display_path: str | None = None, text: str | None = None,
                skip: Collection[str] = ()) -> MarkedDoc:
    """Parse one YAML file; malformed YAML becomes a single ``file:line:col`` UserError.

    ``skip`` names top-level keys whose values the caller does not need: with libyaml they are only
    syntax-checked (a syntax error anywhere still raises), not built, and ``doc.skipped`` lists them.
    Files whose layout is not a plain block mapping are parsed whole.
    """
    shown = display_path or str(path)
    too_big = UserError(f"file is larger than {MAX_FILE_BYTES // 1024} KiB; board and inventory files are "
                        "hand-written text, split or shorten it", Location(shown, 1, 1))
    if text is None:
        try:
            with path.open("rb") as fh:
                raw = fh.read(MAX_FILE_BYTES + 1)
            if len(raw) > MAX_FILE_BYTES:
                raise too_big
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"not valid UTF-8 ({exc.reason}); save the file as UTF-8", Location(shown, 1, 1)) from None
        except OSError as exc:
            raise UserError(f"cannot read file: {exc.strerror}", Location(shown)) from None
    if len(text) > MAX_FILE_BYTES:
        raise too_big
    doc = MarkedDoc(path=path, data=None, display_path=shown)
    found = _UNPRINTABLE.search(text)
    if found is not None:
        bad = found.start()
        line = text.count("\n", 0, bad) + 1
        col = bad - (text.rfind("\n", 0, bad) + 1) + 1
        raise UserError(f"invalid YAML: control character U+{ord(text[bad]):04X} is not allowed; delete it",
                        Location(shown, line, col))
    partial = _without_sections(text, skip) if skip else None
    if partial is not None:
        short, kept, skipped = partial
        loader = _Loader(short)
        try:
            node = loader.get_single_node()
            if node is not None:
                _expanded_size(node, MAX_EXPANDED_NODES, shown)
            doc.data = None if node is None else _convert(loader, node, "", doc)
            if isinstance(doc.data, dict) and list(doc.data) == kept:
                doc.skipped = tuple(skipped)
                return doc
        except (yaml.YAMLError, UserError, ValueError, TypeError, OverflowError, RecursionError):
            pass  # e.g. an alias to an anchor in a skipped section: parse the whole file below
        finally:
            loader.dispose()
        doc = MarkedDoc(path=path, data=None, display_path=shown)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _expanded_size(node, MAX_EXPANDED_NODES, shown)
        doc.data = None if node is None else _convert(loader, node, "", doc)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        content = text.rstrip()
        if mark is not None and mark.index >= len(content) and content:
            # "found <stream end>" points past the file; the last character written is the useful place.
            line = content.count("\n") + 1
            col = len(content) - (content.rfind("\n") + 1)
        raise UserError(f"invalid YAML: {what}; fix the syntax at this position", Location(shown, line, col)) from None
    except yaml.YAMLError as exc:
        raise UserError(f"invalid YAML: {' '.join(str(exc).split())}", Location(shown, 1, 1)) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # Constructors raise plain exceptions for things like out-of-range timestamps.
        raise UserError(f"invalid YAML value: {' '.join(str(exc).split())}", Location(shown, 1, 1)) from None
    finally:
        loader.dispose()
    return doc
