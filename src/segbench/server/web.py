"""What the API's and the browser's routes share: the deployment of the running app, errors as
`{"error": message}` with their status, who is asking, the rate limits, and the uploads' path
from the request body to a queued submission."""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy import Row, select
from sqlalchemy.orm import joinedload
from starlette.concurrency import run_in_threadpool

from ..errors import SegbenchError
from ..stages.uploads import void_warnings
from . import ledger
from .accounts import is_host, team_of
from .board_cache import Encoded
from .deployment import CODE_VERSION, Deployment
from .intake import TooLarge, check, discard, receive
from .models import Phase, Submission, Team
from .parts import PRIVATE, PUBLIC
from .ratelimit import RateLimit

MAX_METHOD, MAX_DESCRIPTION = 128, 4000


class Router(APIRouter):
    """The app's routers: each GET route answers HEAD too (RFC 9110: a general-purpose server
    supports both), the handler run as for GET and the head alone sent by uvicorn. FastAPI's
    routes take only the methods they name (Starlette's plain routes add HEAD themselves)."""

    def add_api_route(self, path: str, endpoint: Callable[..., Any], *, methods: Sequence[str] | None = None,
                      **kwargs: Any) -> None:
        if methods is not None and "GET" in methods:
            methods = [*methods, "HEAD"]
        super().add_api_route(path, endpoint, methods=methods, **kwargs)


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def not_found(what: str = "not found") -> ApiError:
    return ApiError(404, what)


class Limits:
    """The running server's rate limits, from its settings: a process of `processes` that serve
    together counts 1/processes of each (rounded down), so that their sum never passes the limit."""

    def __init__(self, deployment: Deployment, processes: int = 1):
        settings = deployment.settings
        self.requests = RateLimit(settings.requests_per_minute // processes, 60.0)
        self.uploads = RateLimit(settings.uploads_per_hour // processes, 3600.0)


async def known_query(request: Request) -> None:
    """Every query parameter is one the route declares, given once: a misspelt `method` would
    otherwise be dropped without a word (the upload named by nothing), and of a repeated one the
    framework would keep one value silently. Checked before the route reads anything."""
    route = request.scope["route"]
    takes = [field.alias for field in route.dependant.query_params]
    for name, times in Counter(name for name, _ in request.query_params.multi_items()).items():
        if name not in takes:
            accepted = f"it takes {', '.join(takes)}" if takes else "it takes none"
            raise ApiError(400, f"query parameter {name!r}: not one {route.path} takes ({accepted})")
        if times > 1:
            raise ApiError(400, f"query parameter {name!r}: given {times} times; give it once")


def deployment_of(request: Request) -> Deployment:
    return request.app.state.deployment


def limits_of(request: Request) -> Limits:
    return request.app.state.limits


def bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def count_request(request: Request, key: str) -> None:
    if not limits_of(request).requests.take(key):
        raise ApiError(429, "too many requests: wait a minute")


def count_stranger(request: Request) -> None:
    """A request that names no live team counts against its address (guessing tokens is slow)."""
    count_request(request, f"address:{request.client.host if request.client else 'unknown'}")


def team_of_token(request: Request, token: str | None) -> Team:
    if token is None:
        count_stranger(request)
        raise ApiError(401, "no token: send 'Authorization: Bearer TOKEN'")
    with deployment_of(request).sessions() as session:
        team = team_of(session, token)
    if team is None:
        count_stranger(request)
        raise ApiError(401, "the token is not a live team's")
    count_request(request, f"team:{team.id}")
    return team


def require_team(request: Request) -> Team:
    return team_of_token(request, bearer(request))


def require_host(request: Request) -> None:
    token = bearer(request)
    if token is None:
        count_stranger(request)
        raise ApiError(401, "no token: send 'Authorization: Bearer HOST_TOKEN'")
    with deployment_of(request).sessions() as session:
        if is_host(session, token):
            return
        if team_of(session, token) is not None:
            raise ApiError(403, "a host endpoint: a team's token does not open it")
    count_stranger(request)
    raise ApiError(401, "the token is not the host's")


def find_phase(request: Request, benchmark: str, name: str) -> Phase:
    with deployment_of(request).sessions() as session:
        phase = session.scalar(select(Phase).where(Phase.benchmark == benchmark, Phase.name == name))
    if phase is None:
        raise not_found(f"no phase {name!r} of benchmark {benchmark!r}")
    return phase


# What a board read needs of its phase: read in one light query of these columns, not the whole
# row with its documents (on a kept board, a read is mostly this query).
BOARD_STATE = (Phase.id, Phase.board_version, Phase.dataset_id, Phase.revealed_at,
               Phase.floor_private_results.is_not(None).label("has_private"))


async def board_state(request: Request, benchmark: str, name: str) -> Row:
    """The phase's BOARD_STATE columns (id, board_version, dataset_id, revealed_at, has_private),
    read after the request arrived, in one read shared with the requests for it that wait too
    (shared_reads): the boards' hot path."""
    deployment = deployment_of(request)

    def query() -> Row | None:
        with deployment.sessions() as session:
            return session.execute(select(*BOARD_STATE).where(Phase.benchmark == benchmark, Phase.name == name)).first()

    found = await request.app.state.board_states.read((benchmark, name), query)
    if found is None:
        raise not_found(f"no phase {name!r} of benchmark {benchmark!r}")
    return found


def not_modified(request: Request, etag: str) -> bool:
    """Whether the request's If-None-Match names `etag` (or is `*`): the client holds these bytes."""
    sent = request.headers.get("if-none-match")
    if sent is None:
        return False
    tags = [tag.strip() for tag in sent.split(",")]
    return "*" in tags or any(tag.removeprefix("W/") == etag for tag in tags)


def encoded_response(request: Request, board: Encoded, media_type: str) -> Response:
    """A kept board's bytes, or 304 when the client holds them; every client revalidates (no-cache)."""
    headers = {"ETag": board.etag, "Cache-Control": "no-cache"}
    if not_modified(request, board.etag):
        return Response(status_code=304, headers=headers)
    return Response(board.body, media_type=media_type, headers=headers)


def own_submission(request: Request, team: Team, submission_id: str) -> Submission:
    """The team's submission; another team's, like a missing one, is 'not found'."""
    with deployment_of(request).sessions() as session:
        found = session.scalar(select(Submission).options(joinedload(Submission.phase))
                               .where(Submission.id == submission_id, Submission.team_id == team.id))
    if found is None:
        raise not_found(f"no submission {submission_id!r} of team {team.name}")
    return found


def select_submission(request: Request, team: Team, submission_id: str, chosen: bool) -> Submission:
    with deployment_of(request).sessions() as session:
        return ledger.select_for_ranking(session, team, submission_id, chosen)


def own_submissions(request: Request, team: Team) -> list[Submission]:
    with deployment_of(request).sessions() as session:
        return list(session.scalars(select(Submission).options(joinedload(Submission.phase))
                                    .where(Submission.team_id == team.id)
                                    .order_by(Submission.created_at.desc(), Submission.id)))


def checked_text(value: str, field: str, longest: int, forbidden: str = "") -> str:
    if len(value) > longest:
        raise ApiError(400, f"{field}: at most {longest} characters")
    # Unicode's "other" categories: controls (C0 and C1), format characters (bidi overrides, zero
    # widths: a name shown on the board must read as it is stored), surrogates, private use, unassigned.
    hidden = next((c for c in value if unicodedata.category(c)[0] == "C" and c not in "\n\t"), None)
    if hidden is not None:
        named = " ".join(filter(None, (f"U+{ord(hidden):04X}", unicodedata.name(hidden, ""))))
        raise ApiError(400, f"{field}: control characters are not allowed ({named})")
    if any(c in forbidden for c in value):
        raise ApiError(400, f"{field}: {' and '.join(map(repr, forbidden))} are not allowed (a name, not a path)")
    return value


def ladder_view(submission: Submission) -> dict[str, Any]:
    """What the public board's Ladder released for the team after this submission."""
    return {"public_score": submission.public_score, "decimals": submission.public_decimals,
            "released": submission.released, "note": submission.ladder_note}


UPLOAD_TYPES = ("application/zip", "application/octet-stream")


def check_upload_type(request: Request) -> None:
    """An API upload's body is declared a zip (or plain bytes); a form or text body is refused unread."""
    declared = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if declared not in UPLOAD_TYPES:
        raise ApiError(415, f"the body is {declared or 'undeclared'}: send the zip as {' or '.join(UPLOAD_TYPES)}")


def warnings_of(submission: Submission) -> list[str]:
    """What the intake warned of when it accepted the upload (check-submission's words)."""
    return json.loads(submission.warnings) if submission.warnings else []


def submission_view(submission: Submission) -> dict[str, Any]:
    """A submission as its own team sees it: status, provenance, its selection and, once scored,
    what the phase shows: before the reveal the Ladder's release on the public part (with
    show_scores false, not even that), never an exact number; after the reveal every metric of
    both parts with the bootstrap's intervals and paired differences."""
    phase = submission.phase
    view = {
        "id": submission.id, "benchmark": phase.benchmark, "phase": phase.name,
        "status": submission.status, "method": submission.method, "description": submission.description,
        "submitted_at": submission.created_at.isoformat() + "Z",
        "scored_at": None if submission.scored_at is None else submission.scored_at.isoformat() + "Z",
        "dataset_id": submission.dataset_id, "upload_sha256": submission.upload_sha256,
        "upload_bytes": submission.upload_bytes, "code_version": submission.code_version, "error": submission.error,
        "selected": submission.selected, "rescore_of": submission.rescore_of,
        "not_predicted": None if submission.not_predicted is None else json.loads(submission.not_predicted),
        "warnings": warnings_of(submission),
    }
    if submission.results is None:
        return view
    if phase.show_scores or phase.revealed_at is not None:
        view["ladder"] = ladder_view(submission)
    if phase.revealed_at is not None:
        for part, results, bootstrap in ((PUBLIC, submission.results, submission.uncertainty),
                                         (PRIVATE, submission.private_results, submission.private_uncertainty)):
            if results is not None:
                document, intervals = json.loads(results), json.loads(bootstrap)
                view[part] = {"frames": document["frames"], "pixels_evaluated": document["pixels_evaluated"],
                              "results": document["results"], "intervals": intervals["intervals"],
                              "comparisons": intervals["comparisons"]}
    return view


async def accept_upload(request: Request, team: Team, phase: Phase, body: AsyncIterator[bytes], method: str,
                        description: str) -> Submission:
    """The body through the intake to a queued submission: refused (and nothing kept) or stored
    and inserted with the quota checked in one transaction."""
    deployment = deployment_of(request)
    if not limits_of(request).uploads.take(f"team:{team.id}"):
        raise ApiError(429, "too many uploads: wait an hour")
    method = checked_text(method, "method", MAX_METHOD, forbidden="/\\\n\t")
    description = checked_text(description, "description", MAX_DESCRIPTION)
    limit = deployment.settings.max_upload_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"upload.zip: more than the upload limit of {limit} bytes")
    received = await receive(body, limit)
    try:
        hidden = await run_in_threadpool(deployment.hidden, phase)
        summary = await run_in_threadpool(check, hidden, received.path)
        warnings = void_warnings(hidden.benchmark.ground_truth, summary["void_pixels"])

        def insert() -> Submission:
            with deployment.sessions() as session:
                return ledger.accept(session, team, phase, received.sha256, received.size, method, description,
                                     CODE_VERSION, lambda: deployment.store.put(received.path, received.sha256),
                                     warnings)

        return await run_in_threadpool(insert)
    finally:
        discard(received)


def error_status(exc: SegbenchError) -> int:
    if isinstance(exc, TooLarge):
        return 413
    if isinstance(exc, ledger.QuotaExhausted):
        return 429
    if isinstance(exc, ledger.PhaseClosed):
        return 403
    if isinstance(exc, ledger.NoSuchSubmission):
        return 404
    if isinstance(exc, (ledger.SelectionRefused, ledger.Replayed, ledger.DataCorrected)):
        return 409
    return 400
