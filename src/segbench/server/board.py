"""A phase's leaderboard: per comparability triple (benchmark version, taxonomy version,
dataset_id), each team's best scored submission by the benchmark's headline (the metric its floor
comparison is made on), with the headline's 95% interval over the benchmark's units and the
paired differences against the baseline and the floor (the worker's bootstrap), the floor row
last. The rows are the workflow's (stages.leaderboard), so the results page renders them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core.benchmark import Benchmark
from ..core.evaluation import beats, headline
from ..stages.leaderboard import COMPARISONS, IDENTITY, floor_row, interval, with_intervals
from ..stages.text_table import flatten
from .models import SCORED, Phase, Submission

UPLOAD = "upload"  # a row's kind: a team's upload (the floor's is "floor")


def scored(session: Session, phase: Phase) -> list[Submission]:
    return list(session.scalars(select(Submission).where(Submission.phase_id == phase.id, Submission.status == SCORED)
                                .order_by(Submission.created_at, Submission.id)))


def best_per_team(benchmark: Benchmark, submissions: Sequence[Submission]) -> list[Submission]:
    """Each team's submission with the highest headline (the earliest among equals), best first."""
    def key(s: Submission) -> tuple:
        value = headline(benchmark, json.loads(s.results)["results"])
        return (value is None, -(value or 0.0), s.created_at, s.id)

    best: dict[int, Submission] = {}
    for submission in sorted(submissions, key=key):
        best.setdefault(submission.team_id, submission)
    return sorted(best.values(), key=key)


def entry_row(benchmark: Benchmark, group: dict[str, Any], submission: Submission, floor_value: Any,
              rank: int) -> dict[str, Any]:
    document = json.loads(submission.results)
    row = {
        **{k: group[k] for k in IDENTITY},
        "rank": rank,
        "model": submission.team.name,
        "kind": UPLOAD,
        "method": submission.method,
        "inference": None,
        "label_space": document["label_space"],
        "frames": document["frames"],
        **flatten(document["results"]),
        "beats_floor": beats(headline(benchmark, document["results"]), floor_value),
        "results": document["results"],
        "submitted_at": submission.created_at.isoformat() + "Z",
        "provenance": {"dataset_id": submission.dataset_id, "upload_sha256": submission.upload_sha256,
                       "code_version": submission.code_version},
    }
    return with_intervals(group, row, json.loads(submission.uncertainty))


def groups(benchmark: Benchmark, phase: Phase, submissions: Sequence[Submission]) -> list[dict[str, Any]]:
    """The board's groups, one per triple (a phase whose data was corrected has two)."""
    floor = json.loads(phase.floor_results)
    floor_value = headline(benchmark, floor["results"])
    by_triple: dict[str, list[Submission]] = {}
    for submission in submissions:
        by_triple.setdefault(submission.dataset_id, []).append(submission)
    out = []
    for dataset_id in sorted(by_triple, key=lambda d: (d != phase.dataset_id, d)):
        group = {"benchmark": benchmark.name, "benchmark_version": benchmark.benchmark_version,
                 "taxonomy_version": benchmark.taxonomy_version, "dataset_id": dataset_id, "split": phase.split,
                 "phase": phase.name, "headline": ".".join(benchmark.floor_compare_on), "inference_modes": []}
        rows = [entry_row(benchmark, group, s, floor_value, rank)
                for rank, s in enumerate(best_per_team(benchmark, by_triple[dataset_id]), start=1)]
        if dataset_id == phase.dataset_id:
            rows.append({**floor_row(group, floor), "rank": None})
        out.append({**group, "rows": rows})
    return out


def comparison(row: dict[str, Any], role: str) -> dict[str, Any] | None:
    if row.get(f"vs_{role}.difference") is None:
        return None
    return {k: row[f"vs_{role}.{k}"] for k in ("against", "difference", "ci_low", "ci_high", "excludes_zero")}


def board_json(groups_: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The board as the API serves it: per group its triple, and per entry the headline with its
    interval, the paired differences, the flag and the provenance (every metric stays on the
    submission's own page)."""
    out = []
    for group in groups_:
        key = group["headline"]
        entries = []
        for row in group["rows"]:
            value, low, high = interval(row, key)
            upload = row["kind"] == UPLOAD
            entry = {"rank": row["rank"], "kind": row["kind"], "team": row["model"] if upload else None,
                     "method": row["method"] if upload else None,
                     "headline": {"metric": key, "value": value, "ci_low": low, "ci_high": high},
                     "beats_floor": row["beats_floor"], "frames": row["frames"]}
            if upload:
                entry.update({f"vs_{role}": comparison(row, role) for role in COMPARISONS})
                entry.update({"submitted_at": row["submitted_at"], "provenance": row["provenance"]})
            entries.append(entry)
        out.append({**{k: group[k] for k in (*IDENTITY, "phase", "headline")}, "entries": entries})
    return {"groups": out}
