"""The team's side of the API (`segbench submit`, `segbench submissions`), on the standard
library alone: an upload streamed from its file, the server's refusals as SegbenchErrors
carrying its message."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from ..errors import SegbenchError
from ..io.oserrors import file_error

DONE = ("scored", "failed")
TIMEOUT = 300.0  # seconds one request may take (an upload's intake decodes every mask)


def request(server: str, token: str, path: str, method: str = "GET", body=None,
            headers: dict[str, str] | None = None) -> Any:
    url = server.rstrip("/") + path
    call = urllib.request.Request(url, data=body, method=method,
                                  headers={"Authorization": f"Bearer {token}", "Accept": "application/json",
                                           **(headers or {})})
    try:
        with urllib.request.urlopen(call, timeout=TIMEOUT) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read())["error"]
        except (ValueError, KeyError, TypeError):
            message = exc.reason
        raise SegbenchError(f"{server}: refused ({exc.code}): {message}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise SegbenchError(f"{server}: cannot reach the server ({getattr(exc, 'reason', exc)})") from None


def submit(server: str, token: str, benchmark: str, phase: str, upload: Path, method: str = "",
           description: str = "") -> dict[str, Any]:
    """Upload the zip; returns {id, status}."""
    query = urllib.parse.urlencode({"method": method, "description": description})
    path = (f"/api/v1/benchmarks/{urllib.parse.quote(benchmark, safe='')}/phases/"
            f"{urllib.parse.quote(phase, safe='')}/submissions?{query}")
    try:
        size = upload.stat().st_size
        stream = upload.open("rb")
    except OSError as exc:
        raise file_error(exc, upload, "upload") from None
    with stream:
        return request(server, token, path, "POST", stream,
                       {"Content-Type": "application/zip", "Content-Length": str(size)})


def submission(server: str, token: str, submission_id: str) -> dict[str, Any]:
    return request(server, token, f"/api/v1/submissions/{urllib.parse.quote(submission_id, safe='')}")


def submissions(server: str, token: str) -> list[dict[str, Any]]:
    return request(server, token, "/api/v1/submissions")["submissions"]


def wait(server: str, token: str, submission_id: str, timeout: float, poll: float = 1.0) -> dict[str, Any]:
    """The submission once scored or failed; refused after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        view = submission(server, token, submission_id)
        if view["status"] in DONE:
            return view
        if time.monotonic() > deadline:
            raise SegbenchError(f"submission {submission_id}: still {view['status']} after {timeout:.0f} s")
        time.sleep(poll)
