"""How `snakemake --report` finds the figures in a figures job's folder: a file-name pattern per
kind of figure (core.figures.KINDS), whose wildcard is what the figure is keyed by, and the labels
of each file found, read back from that wildcard."""

from __future__ import annotations

from collections.abc import Mapping

from ..core.figures import KINDS


def report_patterns() -> list[str]:
    return [f"{kind}-{{{key}}}.png" for kind, (key, _) in KINDS.items()]


def report_labels(wildcards: Mapping[str, str]) -> dict[str, str]:
    """The labels of one figure: its kind's name and its key (a report, a space or a metric)."""
    (key, name), = [(key, name) for key, name in KINDS.values() if key in wildcards.keys()]
    return {"figure": name, "space": wildcards[key]}
