"""YAML loading that remembers where every node came from (line/column), for one-line error messages."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from xzbuild.errors import Location, UserError


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


def join(path: str, part: str | int) -> str:
    """Append one key or index to a dotted path (an empty key is shown as ``""``)."""
    text = str(part)
    if not _PLAIN_KEY.match(text):
        text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{path}.{text}" if path else text


# libyaml's parser is ~10x faster and reports the same marks; fall back to pure Python without it.
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader whose constructors we call node by node."""


def _convert(loader: _Loader, node: yaml.Node, path: str, doc: MarkedDoc) -> Any:
    doc.marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        loader.flatten_mapping(node)
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise UserError(
                    "mapping keys must be plain strings; write the key as text",
                    Location(doc.display_path, key_node.start_mark.line + 1, key_node.start_mark.column + 1),
                )
            key = loader.construct_object(key_node, deep=True)
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


def _unprintable(ch: str) -> bool:
    """Characters PyYAML's reader rejects (it reports them without a line number)."""
    return not (ch in "\t\n\r" or "\x20" <= ch <= "\x7e" or ch == "\x85" or "\xa0" <= ch <= "\ud7ff"
                or "\ue000" <= ch <= "\ufffd" or "\U00010000" <= ch <= "\U0010ffff")


def load_marked(path: Path, display_path: str | None = None, text: str | None = None) -> MarkedDoc:
    """Parse one YAML file; malformed YAML becomes a single ``file:line:col`` UserError."""
    shown = display_path or str(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"not valid UTF-8 ({exc.reason}); save the file as UTF-8", Location(shown, 1, 1)) from None
        except OSError as exc:
            raise UserError(f"cannot read file: {exc.strerror}", Location(shown)) from None
    doc = MarkedDoc(path=path, data=None, display_path=shown)
    bad = next((i for i, ch in enumerate(text) if _unprintable(ch)), None)
    if bad is not None:
        line = text.count("\n", 0, bad) + 1
        col = bad - (text.rfind("\n", 0, bad) + 1) + 1
        raise UserError(f"invalid YAML: control character U+{ord(text[bad]):04X} is not allowed; delete it",
                        Location(shown, line, col))
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
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
