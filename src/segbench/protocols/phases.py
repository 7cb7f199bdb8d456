"""The phases of a benchmark's hosted evaluation: config/phases/<benchmark>.yaml, validated by
workflow/schemas/phases.schema.json, loaded into core/phase.py's Phase. Errors name the file, the
line and the field."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from ..core.phase import Phase
from ..errors import SegbenchError
from ..io.paths import config_dir
from ..io.schemas import validate
from .definitions import SAFE_LOADER, load_benchmark


class PhaseLoader(SAFE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, with timestamps kept as the text written (an unquoted ISO 8601 time would
    otherwise become a datetime, naive where the offset is left out): the schema checks the text
    and parse_time() reads it."""


PhaseLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))


def phases_path(benchmark: str) -> Path:
    return config_dir() / "phases" / f"{benchmark}.yaml"


def read_with_lines(path: Path) -> tuple[Any, yaml.Node | None]:
    """The document and its node tree (for the line of each field)."""
    try:
        loader = PhaseLoader(path.read_text())
    except OSError as exc:
        raise SegbenchError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        node = loader.get_single_node()
        return (None if node is None else loader.construct_document(node)), node
    except yaml.YAMLError as exc:
        raise SegbenchError(f"{path}: not valid YAML: {exc}") from None
    finally:
        loader.dispose()


def line_finder(root: yaml.Node | None):
    """field path -> 1-based line of the deepest node on it that the file has."""

    def line_of(field: list[str | int]) -> int | None:
        node = root
        for part in field:
            if isinstance(node, yaml.MappingNode):
                found = [value for key, value in node.value if key.value == part]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                found = [node.value[part]]
            else:
                found = []
            if not found:
                break
            node = found[0]
        return None if node is None else node.start_mark.line + 1

    return line_of


def parse_time(text: str | None, where: str) -> datetime | None:
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text).astimezone(timezone.utc)
    except ValueError as exc:
        raise SegbenchError(f"{where}: '{text}' is not a time: {exc}") from None


def load_phases(path: Path) -> dict[str, Phase]:
    """name -> Phase of one file, in the file's order."""
    path = Path(path)
    document, root = read_with_lines(path)
    line_of = line_finder(root)
    validate(document, "phases", path, line_of=line_of)

    def where(*field: str | int) -> str:
        return f"{path}:{line_of(list(field))}: field '{'/'.join(map(str, field))}'"

    name = document["benchmark"]
    if name != path.stem:
        raise SegbenchError(f"{where('benchmark')}: '{name}' is not the file's stem '{path.stem}'")
    benchmark = load_benchmark(name)
    phases: dict[str, Phase] = {}
    for i, entry in enumerate(document["phases"]):
        if entry["name"] in phases:
            raise SegbenchError(f"{where('phases', i, 'name')}: phase '{entry['name']}' is defined twice")
        if entry["split"] not in benchmark.splits:
            raise SegbenchError(f"{where('phases', i, 'split')}: '{entry['split']}' is not a split of "
                                f"{name} {list(benchmark.splits)}")
        start = parse_time(entry.get("start"), where("phases", i, "start"))
        end = parse_time(entry.get("end"), where("phases", i, "end"))
        if start is not None and end is not None and start >= end:
            raise SegbenchError(f"{where('phases', i, 'end')}: {end.isoformat()} is not after the start {start.isoformat()}")
        quota_day, quota_total = entry.get("quota_per_day"), entry.get("quota_total")
        if quota_day is not None and quota_total is not None and quota_day > quota_total:
            raise SegbenchError(f"{where('phases', i, 'quota_per_day')}: {quota_day} is more than quota_total {quota_total}")
        phases[entry["name"]] = Phase(
            name=entry["name"],
            benchmark=name,
            split=entry["split"],
            start=start,
            end=end,
            quota_per_day=quota_day,
            quota_total=quota_total,
            selection=entry.get("selection", 1),
            show_scores=entry.get("show_scores", True),
            private_fraction=float(entry["private_fraction"]),
        )
    return phases
