"""The browser's routes: sign-in with the team token (then an HttpOnly, SameSite=Strict session
cookie), a team's page with its upload form, its submissions' pages, the boards. Every form
posts a CSRF token: before sign-in the one in a cookie of its own (double submit), after it the
session's (kept in the database), each compared in constant time."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import AsyncIterator
from html import escape

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException

from . import accounts
from .api import phase_board, phases
from .intake import TooLarge
from .models import BrowserSession
from .parts import PRIVATE, PUBLIC
from .pages import board_page, frame, index_page, submission_page, team_page
from .web import (MAX_DESCRIPTION, MAX_METHOD, ApiError, Router, accept_upload, count_request, deployment_of,
                  encoded_response, find_phase, own_submission, own_submissions, submission_view, team_of_token)

router = Router()
SESSION, SIGNIN = "segbench_session", "segbench_signin"
CHUNK = 1 << 20
TOKEN_FIELD = 256  # characters: a token (47) or a CSRF token (43), with room
UTF8_WIDEST = 4  # bytes of UTF-8's widest character


async def form_of(request: Request, what: str, files: int, fields: int, longest: int) -> FormData:
    """A form's fields: at most `files` files and `fields` fields, each text field at most `longest`
    characters (counted at UTF-8's widest, so a name in any script fits as the API takes it).
    Starlette's refusal names no field: it is said with what the form takes."""
    try:
        return await request.form(max_files=files, max_fields=fields, max_part_size=UTF8_WIDEST * longest)
    except HTTPException as exc:
        raise ApiError(exc.status_code, f"the {what} form: {exc.detail} (it takes {files} file(s), "
                                        f"{fields} fields, each text at most {longest} characters)") from None


def error_page(request: Request, status: int, message: str,
               headers: dict[str, str] | None = None) -> HTMLResponse | None:
    """An error as a page for the browser's routes; None for the API's (they answer JSON)."""
    if request.url.path.startswith("/api/"):
        return None
    return HTMLResponse(frame(f"error {status}", f"<pre>{escape(message)}</pre>"), status_code=status, headers=headers)


def signed_in(request: Request) -> BrowserSession | None:
    cookie = request.cookies.get(SESSION)
    if not cookie:
        return None
    with deployment_of(request).sessions() as session:
        return accounts.browser_session(session, cookie)


def require_session(request: Request) -> BrowserSession:
    found = signed_in(request)
    if found is None:
        raise ApiError(401, "sign in first (your team's token, on the front page)")
    count_request(request, f"team:{found.team_id}")
    return found


def same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(str(a), str(b))


def check_csrf(expected: str | None, sent: object) -> None:
    if not isinstance(sent, str) or not same(expected, sent):
        raise ApiError(403, "the form's CSRF token is missing or wrong: reload the page and try again")


def secure(request: Request) -> bool:
    return request.url.scheme == "https"


@router.get("/", response_class=HTMLResponse)
def index(request: Request):
    current = signed_in(request)
    listed = phases(request)["phases"]
    if current is not None:
        return HTMLResponse(index_page(listed, current.team.name, current.csrf))
    token = secrets.token_urlsafe(32)
    response = HTMLResponse(index_page(listed, None, token))
    response.set_cookie(SIGNIN, token, httponly=True, samesite="strict", secure=secure(request), path="/signin")
    return response


@router.post("/signin")
async def signin(request: Request):
    form = await form_of(request, "sign-in", 0, 4, TOKEN_FIELD)
    check_csrf(request.cookies.get(SIGNIN), form.get("csrf"))
    token = form.get("token")
    if not isinstance(token, str) or not token.strip():
        raise ApiError(401, "enter your team's token (the one the host gave you)")
    team = await run_in_threadpool(team_of_token, request, token)

    def open_session() -> str:
        with deployment_of(request).sessions() as session:
            return accounts.open_session(session, team, deployment_of(request).settings.session_hours)[0]

    cookie = await run_in_threadpool(open_session)
    response = RedirectResponse("/team", status_code=303)
    response.set_cookie(SESSION, cookie, httponly=True, samesite="strict", secure=secure(request),
                        max_age=int(deployment_of(request).settings.session_hours * 3600))
    response.delete_cookie(SIGNIN, path="/signin")
    return response


@router.post("/signout")
async def signout(request: Request):
    current = await run_in_threadpool(require_session, request)
    form = await form_of(request, "sign-out", 0, 8, TOKEN_FIELD)
    check_csrf(current.csrf, form.get("csrf"))

    def close() -> None:
        with deployment_of(request).sessions() as session:
            accounts.close_session(session, request.cookies[SESSION])

    await run_in_threadpool(close)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION)
    return response


@router.get("/team", response_class=HTMLResponse)
def team(request: Request):
    current = require_session(request)
    views = [submission_view(s) for s in own_submissions(request, current.team)]
    return HTMLResponse(team_page(current.team.name, current.csrf, views, phases(request)["phases"]))


def limited(request: Request, limit: int) -> Request:
    """The request with its body refused as soon as it passes `limit` bytes while it is read."""
    seen = 0

    async def receive():
        nonlocal seen
        message = await request.receive()
        seen += len(message.get("body", b""))
        if seen > limit:
            raise TooLarge(f"upload.zip: more than the upload limit of {limit} bytes")
        return message

    return Request(request.scope, receive)


async def chunks(upload: UploadFile) -> AsyncIterator[bytes]:
    while block := await upload.read(CHUNK):
        yield block


@router.post("/team/upload")
async def team_upload(request: Request):
    current = await run_in_threadpool(require_session, request)
    settings = deployment_of(request).settings
    form = await form_of(limited(request, settings.max_upload_bytes + 64 * 1024), "upload", 1, 8,
                         max(MAX_METHOD, MAX_DESCRIPTION))
    check_csrf(current.csrf, form.get("csrf"))
    upload = form.get("upload")
    target = form.get("phase")
    if not isinstance(upload, UploadFile) or not isinstance(target, str) or "/" not in target:
        raise ApiError(400, "the form needs a phase and an upload (a zip)")
    benchmark, _, name = target.partition("/")
    phase = await run_in_threadpool(find_phase, request, benchmark, name)
    method, description = form.get("method") or "", form.get("description") or ""
    if not isinstance(method, str) or not isinstance(description, str):
        raise ApiError(400, "method and description are text")
    submission = await accept_upload(request, current.team, phase, chunks(upload), method, description)
    return RedirectResponse(f"/submissions/{submission.id}", status_code=303)


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def submission(submission_id: str, request: Request):
    current = require_session(request)
    view = submission_view(own_submission(request, current.team, submission_id))
    return HTMLResponse(submission_page(view, current.team.name, current.csrf))


async def board_html(request: Request, benchmark: str, phase: str, part: str, dataset_id: str | None) -> Response:
    board = await phase_board(request, benchmark, phase, part, "html",
                              lambda groups: board_page(benchmark, phase, groups, part).encode(), dataset_id)
    return encoded_response(request, board, "text/html")


@router.get("/boards/{benchmark}/{phase}", response_class=HTMLResponse)
async def board(benchmark: str, phase: str, request: Request, dataset_id: str | None = None):
    return await board_html(request, benchmark, phase, PUBLIC, dataset_id)


@router.get("/boards/{benchmark}/{phase}/private", response_class=HTMLResponse)
async def private_board(benchmark: str, phase: str, request: Request, dataset_id: str | None = None):
    return await board_html(request, benchmark, phase, PRIVATE, dataset_id)
