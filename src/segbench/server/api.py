"""The JSON API (/api/v1): a team's uploads, its own submissions and its selection for the
private ranking, the public boards, the private boards once revealed, and the host's view of
every submission (host token only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse, Response
from sqlalchemy import Row, select
from sqlalchemy.orm import joinedload
from starlette.concurrency import run_in_threadpool

from ..protocols.definitions import load_benchmark
from .board import board_groups, board_json, scored
from .board_cache import Encoded, encoded
from .models import Phase, Submission, SupersededDataset
from .parts import PRIVATE, PUBLIC
from .web import (ApiError, Router, accept_upload, board_state, check_upload_type, deployment_of, encoded_response,
                  find_phase, known_query, own_submission, own_submissions, require_host, require_team,
                  select_submission, submission_view, warnings_of)

router = Router(prefix="/api/v1", dependencies=[Depends(known_query)])


@router.post("/benchmarks/{benchmark}/phases/{phase}/submissions", status_code=201)
async def upload(benchmark: str, phase: str, request: Request, method: str = "", description: str = "") -> dict:
    """The request's body is the upload (a zip); method and description in the query."""
    team = await run_in_threadpool(require_team, request)
    check_upload_type(request)
    found = await run_in_threadpool(find_phase, request, benchmark, phase)
    submission = await accept_upload(request, team, found, request.stream(), method, description)
    return {"id": submission.id, "status": submission.status, "warnings": warnings_of(submission)}


@router.get("/submissions")
def submissions(request: Request) -> dict:
    team = require_team(request)
    return {"team": team.name, "submissions": [submission_view(s) for s in own_submissions(request, team)]}


@router.get("/submissions/{submission_id}")
def submission(submission_id: str, request: Request) -> dict:
    return submission_view(own_submission(request, require_team(request), submission_id))


@router.post("/submissions/{submission_id}/select")
def choose(submission_id: str, request: Request) -> dict:
    """Choose the submission for the private ranking (at most the phase's `selection`)."""
    return submission_view(select_submission(request, require_team(request), submission_id, True))


@router.delete("/submissions/{submission_id}/select")
def unchoose(submission_id: str, request: Request) -> dict:
    return submission_view(select_submission(request, require_team(request), submission_id, False))


@router.get("/phases")
def phases(request: Request) -> dict:
    with deployment_of(request).sessions() as session:
        found = session.scalars(select(Phase).order_by(Phase.benchmark, Phase.name)).all()
        return {"phases": [{"benchmark": p.benchmark, "phase": p.name, "split": p.split, "dataset_id": p.dataset_id,
                            "selection": p.selection, "show_scores": p.show_scores,
                            "revealed": p.revealed_at is not None} for p in found]}


async def board_phase(request: Request, benchmark: str, phase: str, part: str) -> Row:
    """The phase's board state (web.BOARD_STATE), when its `part` board may be served: the public
    one always, the private one once the host revealed the phase (before: 403)."""
    found = await board_state(request, benchmark, phase)
    if part == PRIVATE and found.revealed_at is None:
        raise ApiError(403, f"the private board of phase {phase!r} is not revealed yet")
    if part == PRIVATE and not found.has_private:
        raise ApiError(404, f"phase {phase!r} has no private part")
    return found


async def phase_board(request: Request, benchmark: str, phase: str, part: str, rendering: str,
                      render: Callable[[list[dict[str, Any]]], bytes], dataset_id: str | None = None) -> Encoded:
    """render(the board's groups; with `dataset_id`, that dataset's group alone: a superseded
    one's own URL) encoded, built once per version of what the board shows (board_cache). A kept
    board is answered on the event loop; a build, or a dataset's check, runs in the thread pool."""
    found = await board_phase(request, benchmark, phase, part)
    key = (part, rendering, dataset_id)
    kept = request.app.state.boards.kept(found, key)  # a dataset's board is kept only once its check passed
    if kept is not None:
        return kept
    return await run_in_threadpool(built_board, request, found, benchmark, phase, key, render)


def built_board(request: Request, found: Row, benchmark: str, phase: str, key: tuple[str, str, str | None],
                render: Callable[[list[dict[str, Any]]], bytes]) -> Encoded:
    """The board `key` (part, rendering, dataset_id) as of `found`, built when not kept: the phase
    and its submissions are read after the version, with their teams in the same query, and the
    board is built with no database connection held. A dataset the phase never had, or one with
    no scored submission: 404 (the first before the cache, which keeps only the phase's datasets)."""
    deployment, (part, _, dataset_id) = deployment_of(request), key
    if dataset_id is not None and dataset_id != found.dataset_id:
        with deployment.sessions() as session:
            known = session.scalar(select(SupersededDataset.id).where(SupersededDataset.phase_id == found.id,
                                                                      SupersededDataset.dataset_id == dataset_id))
        if known is None:
            raise ApiError(404, f"phase {phase!r} has no dataset {dataset_id!r}")

    def build() -> Encoded:
        with deployment.sessions() as session:
            current = session.get(Phase, found.id)
            submissions = scored(session, current)
        groups = board_groups(deployment, load_benchmark(benchmark), current, submissions, part)
        if dataset_id is not None:
            groups = [g for g in groups if g["dataset_id"] == dataset_id]
            if not groups:
                raise ApiError(404, f"phase {phase!r} has no scored submission on dataset {dataset_id!r}")
        return encoded(render(groups))

    return request.app.state.boards.get(found, key, build)


async def board_response(request: Request, benchmark: str, phase: str, part: str, dataset_id: str | None) -> Response:
    board = await phase_board(request, benchmark, phase, part, "json", lambda groups: JSONResponse(
        {"benchmark": benchmark, "phase": phase, **board_json(groups)}).body, dataset_id)
    return encoded_response(request, board, "application/json")


@router.get("/benchmarks/{benchmark}/phases/{phase}/leaderboard")
async def leaderboard(benchmark: str, phase: str, request: Request, dataset_id: str | None = None) -> Response:
    return await board_response(request, benchmark, phase, PUBLIC, dataset_id)


@router.get("/benchmarks/{benchmark}/phases/{phase}/private-leaderboard")
async def private_leaderboard(benchmark: str, phase: str, request: Request, dataset_id: str | None = None) -> Response:
    return await board_response(request, benchmark, phase, PRIVATE, dataset_id)


@router.get("/host/submissions")
def host_submissions(request: Request) -> dict:
    require_host(request)
    with deployment_of(request).sessions() as session:
        found = session.scalars(select(Submission).options(joinedload(Submission.phase), joinedload(Submission.team))
                                .order_by(Submission.created_at, Submission.id)).all()
    return {"submissions": [{**submission_view(s), "team": s.team.name, "attempts": s.attempts} for s in found]}
