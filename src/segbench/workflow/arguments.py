"""The command lines of the rules: `segbench COMMAND ...` with its output in the job's log, and
the arguments built from a job's wildcards, inputs and the config (every path quoted)."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


def cli(command: str, arguments: str) -> str:
    """The shell command of a rule: `segbench COMMAND ...`, its output in the log, shown again on
    failure. Every path in `arguments` is quoted with {...:q}."""
    return f"segbench {command} {arguments} > {{log:q}} 2>&1 || (cat {{log:q}} >&2; exit 1)"


def as_list(files: str | Sequence[str]) -> list[str]:
    """An input of a job as a list (a named input of one file is a string)."""
    return [files] if isinstance(files, str) else list(files)


def quoted(paths: Iterable[str]) -> str:
    return " ".join(map(shlex.quote, paths))


def data_folder(data: str, listed: Sequence[str], local: Sequence[str]) -> str:
    """--data of a job: the dataset folder `data`, or, where the job lists the dataset files
    `listed` as an input (staged), the local copy of that folder, found from the first one's local
    path (the first of `local`, that input's local paths)."""
    if not listed:
        return data
    depth = len(Path(os.path.relpath(listed[0], data)).parts)  # how far below the folder it lies
    return str(Path(local[0]).parents[depth - 1])


def comparison_arguments(baseline: Sequence[str], floor: Sequence[str]) -> str:
    """--baseline-counts and --floor-counts of the jobs comparing a model with its baseline and
    the floor (each left out where there is nothing to compare with)."""
    arguments = ""
    if baseline:
        arguments += f"--baseline-counts {quoted(baseline)} "
    if floor:
        arguments += f"--floor-counts {quoted(floor)}"
    return arguments


def dataset_manifest_argument(manifest: str | None) -> str:
    """--dataset-manifest MANIFEST where the config names a committed manifest to check the dataset against."""
    return f"--dataset-manifest {shlex.quote(str(manifest))}" if manifest else ""


def splits_argument(splits: Iterable[str]) -> str:
    return " ".join(f"--split {shlex.quote(s)}" for s in splits)


def slicings_argument(entry: Mapping[str, Any]) -> str:
    """The config entry's own `slices` list, which replaces the benchmark definition's, as JSON
    for the slices job (nothing where the config gives none: the job takes the definition's)."""
    if "slices" not in entry:
        return ""
    return f"--slicings {shlex.quote(json.dumps(entry['slices'], sort_keys=True))}"


def scored_arguments(identity: str | None, predictions: str | None) -> str:
    """What a score job scores: a model's masks with its identity record, or (both None) the
    floor, from the ground truth alone."""
    if identity is None or predictions is None:
        return "--floor"
    return f"--identity {shlex.quote(identity)} --predictions {shlex.quote(predictions)}"
