"""The phases of a benchmark's hosted evaluation: config/phases/<benchmark>.yaml, validated by
workflow/schemas/phases.schema.json, loaded into core/phase.py's Phase. Errors name the file, the
line and the field."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from ..core.phase import Phase
from ..errors import SegbenchError
from ..io.paths import config_dir
from ..io.schemas import validate
from ..io.yamlfile import read_yaml_file
from .definitions import SAFE_LOADER, load_benchmark


class PhaseLoader(SAFE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, with timestamps kept as the text written (an unquoted ISO 8601 time would
    otherwise become a datetime, naive where the offset is left out): the schema checks the text
    and parse_time() reads it."""


PhaseLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))


def phases_path(benchmark: str) -> Path:
    return config_dir() / "phases" / f"{benchmark}.yaml"


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
    read = read_yaml_file(path, PhaseLoader)
    document = read.document
    validate(document, "phases", read.at)

    def where(*field: str | int) -> str:
        return f"{read.at(field)}: field '{'/'.join(map(str, field))}'"

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
