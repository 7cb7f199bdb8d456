"""A YAML file read with the line of every field, so that an error about a value can name the
file and the line that holds it (`file:line`). The loader is the caller's (the project's safe
loader, or a variant of it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import SegbenchError
from .oserrors import file_error


def node_lines(node: yaml.Node, at: tuple[str, ...], lines: dict[tuple[str, ...], int]) -> None:
    """The line (1-based) of every field under `node`: a mapping key's line, a list item's."""
    if isinstance(node, yaml.MappingNode):
        children = [((*at, str(key.value)), key, value) for key, value in node.value]
    elif isinstance(node, yaml.SequenceNode):
        children = [((*at, str(i)), item, item) for i, item in enumerate(node.value)]
    else:
        return
    for path, marked, value in children:
        lines[path] = marked.start_mark.line + 1
        node_lines(value, path, lines)


@dataclass(frozen=True)
class YamlFile:
    """A document and where its fields are: `name` (the file as it is named in messages) and the
    line of every field path (components as strings)."""

    name: str
    document: Any = None
    lines: dict[tuple[str, ...], int] = field(default_factory=dict)

    def line_of(self, field_path: Sequence[Any]) -> int | None:
        """The line of `field_path`, or of its deepest part the file has (a missing field is named
        where its parent is); None when the file has none of it."""
        at = tuple(str(p) for p in field_path)
        for n in range(len(at), 0, -1):
            if at[:n] in self.lines:
                return self.lines[at[:n]]
        return None

    def at(self, field_path: Sequence[Any]) -> str:
        """'file:line' of a field, or the file alone where no line is known."""
        line = self.line_of(field_path)
        return f"{self.name}:{line}" if line else self.name


def read_yaml_file(path: Path, loader: type, name: str | None = None) -> YamlFile:
    """`path` parsed by `loader`, with the line of every field; unreadable text and syntax errors
    refused naming the file and the line."""
    name = str(path) if name is None else name
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise file_error(exc, name) from None
    try:
        document = yaml.load(text, Loader=loader)
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}" if mark else name
        context = f" ({exc.context} at line {exc.context_mark.line + 1})" if exc.context and exc.context_mark else ""
        raise SegbenchError(f"{where}: not valid YAML: {exc.problem or exc.context}{context}") from None
    except yaml.YAMLError as exc:
        raise SegbenchError(f"{name}: not valid YAML: {exc}") from None
    lines: dict[tuple[str, ...], int] = {}
    if root is not None:
        node_lines(root, (), lines)
    return YamlFile(name, document, lines)
