"""Where the workflow writes each result: one path template per result, filled from a job's
wildcards (benchmark, split, model, shard). Every rule and target list names a result by its key here, never by a path of its own."""

from __future__ import annotations

import re
from collections.abc import Iterable

TEMPLATES = {
    # outside the results: a pull is made only where an input is missing, and the results tree
    # (pinned by DVC) is the same whether it was
    "pinned": ".snakemake/segbench/pinned.json",
    "manifest": "{R}/{benchmark}/manifest.json",
    "dataset": "{R}/{benchmark}/dataset.json",
    "frames": "{R}/{benchmark}/frames.json",
    "audit": "{R}/{benchmark}/audit.json",
    "audit_text": "{R}/{benchmark}/audit.txt",
    "identity": "{R}/{benchmark}/models/{model}/identity.json",
    "predictions": "{R}/{benchmark}/{split}/{model}/predictions/shard-{shard}",
    "counts": "{R}/{benchmark}/{split}/{model}/counts/shard-{shard}.parquet",
    "metrics": "{R}/{benchmark}/{split}/{model}/metrics.json",
    "submission": "{R}/{benchmark}/{split}/{model}/submission.json",
    "uncertainty": "{R}/{benchmark}/{split}/{model}/uncertainty.json",
    "slices": "{R}/{benchmark}/{split}/{model}/slices.json",
    "plots": "{R}/{benchmark}/{split}/{model}/plots",  # its files: core.figures.figure_files
    "overlays": "{R}/{benchmark}/{split}/{model}/overlays",
    "overlay_frames": "{R}/{benchmark}/{split}/{model}/overlays/frames.json",
    "plot_data_iou": "{R}/plots/iou.csv",
    "plot_data_confusion": "{R}/plots/confusion.csv",
    "leaderboard": "{R}/leaderboard",  # the stem of leaderboard.{csv,md,json,html}
    "tables": "{R}/tables",
}
WILDCARDS = ("benchmark", "split", "model", "shard")
FLOOR = "floor"  # the model wildcard of the ground-truth-only floor


class ResultPaths:
    """The paths of the results under the folder `results`."""

    def __init__(self, results: str):
        self.results = results
        # each wildcard standing for itself: what a template keeps where no value is given
        self._unfilled = {name: f"{{{name}}}" for name in WILDCARDS} | {"R": results}

    def path(self, name: str, **values: object) -> str:
        """The path of result `name` with the given wildcard values; the others stay wildcards."""
        return TEMPLATES[name].format_map(self._unfilled | values)


def one_of(names: Iterable[str]) -> str:
    """A wildcard's constraint: exactly one of `names` (a wildcard sees one path component only)."""
    return "|".join(re.escape(n) for n in names)
