"""A phase's boards, per comparability triple (benchmark version, taxonomy version, dataset_id):

- the public board: each team's current best on the public part as the Ladder released it
  (core.ladder, decided by the worker): the released score, rounded as released, never an exact
  public number; with show_scores false no score and no ranking;
- the private board, served only once the host revealed the phase: each team's selected
  submissions (its own selection, else core.ladder.default_selection over its Ladder), ranked by
  the private headline with its interval and paired differences (the worker's bootstrap).

Both mark each entry tied with the one above (core.significance.mark_ties) and say whether it
beats the floor (core.significance.floor_verdict), the floor row last. The rows are the
workflow's (stages.leaderboard), so the results page renders them."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from ..core.benchmark import Benchmark
from ..core.evaluation import headline
from ..core.ladder import LadderDecision, default_selection
from ..stages.leaderboard import COMPARISONS, IDENTITY, floor_row, interval, with_intervals
from ..stages.text_table import flatten
from .deployment import Deployment
from .models import SCORED, Phase, Submission
from .parts import PRIVATE, PUBLIC, ties, verdict_against_floor
from .versions import phase_versions

UPLOAD = "upload"  # a row's kind: a team's upload (the floor's is "floor")


def scored(session: Session, phase: Phase) -> list[Submission]:
    return list(session.scalars(select(Submission).options(joinedload(Submission.team))
                                .where(Submission.phase_id == phase.id, Submission.status == SCORED)
                                .order_by(Submission.created_at, Submission.id)))


def by_team(submissions: Sequence[Submission]) -> dict[int, list[Submission]]:
    """team -> its submissions in Ladder order."""
    out: dict[int, list[Submission]] = {}
    for submission in sorted(submissions, key=lambda s: (s.ladder_position is None, s.ladder_position or 0, s.id)):
        out.setdefault(submission.team_id, []).append(submission)
    return out


def public_bests(submissions: Sequence[Submission]) -> list[Submission]:
    """Each team's last released submission (its current public best), highest released score
    first (the earlier release among equals)."""
    bests = []
    for own in by_team(submissions).values():
        released = [s for s in own if s.released]
        if released:
            bests.append(released[-1])
    return sorted(bests, key=lambda s: (s.public_score is None, -(s.public_score or 0.0), s.scored_at, s.id))


def decisions_of(own: Sequence[Submission]) -> list[LadderDecision]:
    """The served fields of a team's Ladder decisions, as stored (exact numbers are not kept)."""
    return [LadderDecision(bool(s.released), s.public_score, s.public_decimals, None, None, None, 0, s.ladder_note or "")
            for s in own]


def selection_of(own: Sequence[Submission], count: int) -> list[Submission]:
    """A team's submissions for the private ranking: those it selected, else its last `count`
    released ones (core.ladder.default_selection)."""
    chosen = [s for s in own if s.selected]
    return chosen or [own[i] for i in default_selection(decisions_of(own), count)]


def private_entries(benchmark: Benchmark, phase: Phase, submissions: Sequence[Submission]) -> list[Submission]:
    """Each team's selected submission with the highest private headline, best first."""
    def key(s: Submission) -> tuple:
        value = headline(benchmark, json.loads(s.private_results)["results"])
        return (value is None, -(value or 0.0), s.created_at, s.id)

    entries = []
    for own in by_team(submissions).values():
        selected = sorted(selection_of(own, phase.selection), key=key)
        if selected:
            entries.append(selected[0])
    return sorted(entries, key=key)


def base_row(benchmark: Benchmark, group: dict[str, Any], submission: Submission, rank: int | None,
             document: dict[str, Any]) -> dict[str, Any]:
    return {
        **{k: group[k] for k in IDENTITY},
        "rank": rank, "model": submission.team.name, "kind": UPLOAD, "method": submission.method, "inference": None,
        "label_space": document["label_space"], "frames": document["frames"],
        "submitted_at": submission.created_at.isoformat() + "Z",
        "provenance": {"dataset_id": submission.dataset_id, "upload_sha256": submission.upload_sha256,
                       "code_version": submission.code_version},
    }


def public_row(benchmark: Benchmark, group: dict[str, Any], submission: Submission, rank: int | None,
               show_scores: bool) -> dict[str, Any]:
    """A team's public entry: the released score alone (no exact number, no interval)."""
    row = base_row(benchmark, group, submission, rank, json.loads(submission.results))
    verdict = verdict_against_floor(json.loads(submission.uncertainty), group["headline"], benchmark.group_key)
    return {**row, group["headline"]: submission.public_score if show_scores else None,
            "decimals": submission.public_decimals if show_scores else None,
            "beats_floor": verdict if show_scores else None, "results": {}}


def private_row(benchmark: Benchmark, group: dict[str, Any], submission: Submission, rank: int) -> dict[str, Any]:
    """A team's private entry: every metric on the private part, with its intervals."""
    document, bootstrap = json.loads(submission.private_results), json.loads(submission.private_uncertainty)
    row = {**base_row(benchmark, group, submission, rank, document), **flatten(document["results"]),
           "beats_floor": verdict_against_floor(bootstrap, group["headline"], benchmark.group_key),
           "results": document["results"]}
    return with_intervals(group, row, bootstrap)


def triples(phase: Phase, submissions: Sequence[Submission]) -> list[tuple[str, list[Submission]]]:
    """(dataset_id, its submissions), the phase's current dataset first (a corrected phase has two)."""
    by_triple: dict[str, list[Submission]] = {}
    for submission in submissions:
        by_triple.setdefault(submission.dataset_id, []).append(submission)
    return [(d, by_triple[d]) for d in sorted(by_triple, key=lambda d: (d != phase.dataset_id, d))]


def board_groups(deployment: Deployment, benchmark: Benchmark, phase: Phase, submissions: Sequence[Submission],
                 part: str) -> list[dict[str, Any]]:
    """The public or the private board's groups (the caller checks the reveal for the private one),
    one per dataset of the phase (a superseded one with its own frames, units and floor)."""
    versions = phase_versions(deployment, phase)
    show = part == PRIVATE or phase.show_scores
    out = []
    for dataset_id, own in triples(phase, submissions):
        version = versions[dataset_id]
        hidden, frames, floor = version.hidden, version.parts[part], json.loads(version.floor_results[part])
        unit_of = hidden.groups
        group = {"benchmark": benchmark.name, "benchmark_version": benchmark.benchmark_version,
                 "taxonomy_version": benchmark.taxonomy_version, "dataset_id": dataset_id, "split": phase.split,
                 "phase": phase.name, "part": part, "headline": ".".join(benchmark.floor_compare_on),
                 "inference_modes": [], "unit": benchmark.group_key,
                 # the part's independent units: too few of them and no interval is called significant
                 "units": len({unit_of[f] for f in frames}), "superseded_by": version.superseded_by}
        if part == PUBLIC:
            entries = public_bests(own)
            if not show:
                entries = sorted(entries, key=lambda s: s.team.name)
            row: Callable[[Submission, int], dict[str, Any]] = lambda s, rank: public_row(
                benchmark, group, s, rank if show else None, show)
        else:
            entries = private_entries(benchmark, phase, own)
            row = lambda s, rank: private_row(benchmark, group, s, rank)
        tied = ties(deployment.store, hidden, tuple(s.counts_sha256 for s in entries), frames,
                    deployment.settings.resamples, deployment.settings.seed) if show else (None,) * len(entries)
        rows = [{**row(s, rank), "tied_with_above": tie}
                for rank, (s, tie) in enumerate(zip(entries, tied), start=1)]
        rows.append({**floor_row(group, floor), "rank": None, "tied_with_above": None})
        out.append({**group, "rows": rows})
    return out


def comparison(row: dict[str, Any], role: str) -> dict[str, Any] | None:
    if row.get(f"vs_{role}.difference") is None:
        return None
    return {k: row[f"vs_{role}.{k}"] for k in ("against", "difference", "ci_low", "ci_high", "excludes_zero")}


def board_json(groups_: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The board as the API serves it: per group its triple and part, and per entry the headline
    (the public board: the released score and its decimals; the private board: the value with its
    interval and the paired differences), the tie flag, the floor verdict and the provenance
    (every metric stays on the submission's own page); a superseded dataset's group names the
    dataset_id that replaced it (`superseded_by`, else null)."""
    out = []
    for group in groups_:
        key = group["headline"]
        entries = []
        for row in group["rows"]:
            value, low, high = interval(row, key)
            upload = row["kind"] == UPLOAD
            entry = {"rank": row["rank"], "kind": row["kind"], "team": row["model"] if upload else None,
                     "method": row["method"] if upload else None,
                     "headline": {"metric": key, "value": value, "ci_low": low, "ci_high": high,
                                  **({"decimals": row["decimals"]} if "decimals" in row else {})},
                     "tied_with_above": row["tied_with_above"], "beats_floor": row["beats_floor"],
                     "frames": row["frames"]}
            if upload:
                entry.update({f"vs_{role}": comparison(row, role) for role in COMPARISONS})
                entry.update({"submitted_at": row["submitted_at"], "provenance": row["provenance"]})
            entries.append(entry)
        out.append({**{k: group[k] for k in (*IDENTITY, "phase", "part", "headline", "superseded_by")},
                    "entries": entries})
    return {"groups": out}
