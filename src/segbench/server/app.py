"""The ASGI application: the JSON API and the browser's pages over one deployment, every error as
`{"error": message}` (a page's as the page) with its status, nothing a client sends logged."""

from __future__ import annotations

import sys
import traceback

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException

from .. import __version__
from ..errors import SegbenchError
from . import api, browser
from .board_cache import BoardCache
from .deployment import Deployment
from .headers import SecurityHeaders
from .shared_reads import SharedReads
from .web import ApiError, Limits, error_status


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def refusal(request: Request, status: int, message: str, headers: dict[str, str] | None = None):
    """A refusal as a page on the browser's routes, as JSON on the API's."""
    return browser.error_page(request, status, message, headers) or error(status, message, headers)


def routing_refusal(request: Request, exc: HTTPException) -> tuple[str, dict[str, str] | None]:
    """(message, headers) of Starlette's own refusal: no route at the path (404), or a method the
    path does not take (405, with the Allow header RFC 9110 requires, its methods sorted); any other
    (a form part over its size, ...) as Starlette words it."""
    path = request.url.path
    if exc.status_code == 404:
        return f"nothing at {path}", exc.headers
    if exc.status_code == 405 and exc.headers and "Allow" in exc.headers:
        allowed = ", ".join(sorted(m.strip() for m in exc.headers["Allow"].split(",")))
        return f"{request.method} is not allowed on {path} (it takes {allowed})", {**exc.headers, "Allow": allowed}
    return str(exc.detail), exc.headers


def create_app(deployment: Deployment, processes: int = 1) -> FastAPI:
    """The app of one of `processes` server processes (each counts its share of the rate limits)."""
    app = FastAPI(title="segbench hosted evaluation", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.deployment = deployment
    app.state.limits = Limits(deployment, processes)
    app.state.boards = BoardCache()
    app.state.board_states = SharedReads()

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return refusal(request, exc.status, exc.message)

    @app.exception_handler(SegbenchError)
    async def _refused(request: Request, exc: SegbenchError):
        return refusal(request, error_status(exc), str(exc))

    @app.exception_handler(HTTPException)  # Starlette's own: no route, a form part over its size, ...
    async def _http(request: Request, exc: HTTPException):
        return refusal(request, exc.status_code, *routing_refusal(request, exc))

    @app.exception_handler(OperationalError)
    async def _database_down(request: Request, exc: OperationalError):
        print(f"segbench server: database unavailable: {exc.__class__.__name__}", file=sys.stderr, flush=True)
        return error(503, "the database is unavailable; try again shortly")

    @app.exception_handler(PoolTimeout)
    async def _busy(request: Request, exc: PoolTimeout):
        print("segbench server: no database connection free in time", file=sys.stderr, flush=True)
        return error(503, "the server is busy; try again shortly")

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        traceback.print_exception(exc, file=sys.stderr)  # the host's log; the client learns nothing of it
        return error(500, "internal error (the host's log has it)")

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        fields = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return error(422, f"invalid request: {fields}")

    app.include_router(api.router)
    app.include_router(browser.router)
    app.add_middleware(SecurityHeaders)
    return app
