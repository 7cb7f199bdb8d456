"""The team's side of the API (`segbench submit`, `segbench submissions`), on the standard
library alone: an upload streamed from its file, the server's refusals as SegbenchErrors
carrying its message."""

from __future__ import annotations

import http.client
import io
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import SegbenchError
from ..io.oserrors import file_error
from .released import released_text

DONE = ("scored", "failed")
TIMEOUT = 300.0  # seconds one request may take (an upload's intake decodes every mask)
CONTINUE_WAIT = 1.0  # seconds to wait for "100 Continue" before sending the body anyway (curl's default)
RECEIVE = 65536  # bytes asked of the socket at a time


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
        raise refused(server, exc.code, exc.read(), exc.reason) from None
    except (urllib.error.URLError, OSError) as exc:
        raise unreachable(server, getattr(exc, "reason", exc)) from None


def refused(server: str, status: int, body: bytes, reason: str) -> SegbenchError:
    try:
        message = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        message = reason
    return SegbenchError(f"{server}: refused ({status}): {message}")


def unreachable(server: str, reason: object) -> SegbenchError:
    return SegbenchError(f"{server}: cannot reach the server ({reason})")


def connection_to(url: urllib.parse.SplitResult) -> tuple[http.client.HTTPConnection, str]:
    """(a connection for `url`, the request target), through the proxy the environment names for
    its scheme as urllib's requests go (an https URL tunnelled by CONNECT)."""
    target = url.path + (f"?{url.query}" if url.query else "")
    https = url.scheme == "https"
    proxy = urllib.request.getproxies().get(url.scheme)
    if proxy and not urllib.request.proxy_bypass(url.hostname):
        via = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if not https:  # an http proxy takes the absolute URL
            return http.client.HTTPConnection(via.hostname, via.port, timeout=TIMEOUT), url.geturl()
        connection = http.client.HTTPSConnection(via.hostname, via.port, timeout=TIMEOUT)
        connection.set_tunnel(url.hostname, url.port)
        return connection, target
    kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
    return kind(url.hostname, url.port, timeout=TIMEOUT), target


def early_answer(connection: http.client.HTTPConnection) -> tuple[int, bytes, str] | None:
    """The server's answer to a request head sent with `Expect: 100-continue`: None for "100
    Continue" (or no word within CONTINUE_WAIT: send the body anyway, RFC 9110 10.1.1), else its
    final answer (status, body, reason), given before the body was sent. Read from the socket
    itself with a deadline: over TLS the socket turns readable with no answer in it (the session
    tickets that follow the handshake), so readiness says nothing."""
    sock = connection.sock
    sock.settimeout(CONTINUE_WAIT)
    try:
        received = sock.recv(RECEIVE)
    except TimeoutError:
        return None
    finally:
        sock.settimeout(TIMEOUT)
    while b"\r\n\r\n" not in received:  # the rest of the head
        received += more(sock)
    head, body = received.split(b"\r\n\r\n", 1)
    status_line, _, fields = head.partition(b"\r\n")
    _, status, *reason = status_line.decode("latin-1").split(None, 2)
    if int(status) == 100:  # the server sends nothing more until the body comes
        return None
    length = http.client.parse_headers(io.BytesIO(fields + b"\r\n\r\n")).get("Content-Length", "")
    if not length.isdigit():  # no length: the answer ends with the connection
        while data := sock.recv(RECEIVE):
            body += data
        return int(status), body, (reason or [""])[0].strip()
    while len(body) < int(length):
        body += more(sock)
    return int(status), body[:int(length)], (reason or [""])[0].strip()


def more(sock) -> bytes:
    """The next bytes of an answer not yet whole; the connection closed before it is an error."""
    data = sock.recv(RECEIVE)
    if not data:
        raise ConnectionError("the server closed the connection before its answer ended")
    return data


def post_file(server: str, token: str, path: str, stream: BinaryIO, size: int) -> Any:
    """POST a file's bytes, asking first (`Expect: 100-continue`): a server that will not take the
    upload (a wrong token, a closed phase, a spent quota, over its size limit) says so from the
    request's head before a byte of the body is sent. Without that, it answers and closes while a
    large body is still being sent, and the client sees a reset connection, not the refusal. A
    server or proxy that does not do expectations (417) is sent the upload again without asking."""
    status, body, reason = exchange(server, token, path, stream, size, expect=True)
    if status == 417:
        stream.seek(0)
        status, body, reason = exchange(server, token, path, stream, size, expect=False)
    if status >= 400:
        raise refused(server, status, body, reason)
    return json.loads(body)


def exchange(server: str, token: str, path: str, stream: BinaryIO, size: int,
             expect: bool) -> tuple[int, bytes, str]:
    """(status, body, reason) of the POST of `stream`, on a connection of its own."""
    url = urllib.parse.urlsplit(server.rstrip("/") + path)
    connection, target = connection_to(url)
    try:
        connection.putrequest("POST", target, skip_accept_encoding=True)
        for name, value in (("Authorization", f"Bearer {token}"), ("Accept", "application/json"),
                            ("Content-Type", "application/zip"), ("Content-Length", str(size)),
                            *((("Expect", "100-continue"),) if expect else ())):
            connection.putheader(name, value)
        connection.endheaders()
        answer = early_answer(connection) if expect else None
        if answer is None:
            connection.send(stream)
            response = connection.getresponse()
            answer = response.status, response.read(), response.reason
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise unreachable(server, exc) from None
    finally:
        connection.close()
    return answer


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
        return post_file(server, token, path, stream, size)


def submission(server: str, token: str, submission_id: str) -> dict[str, Any]:
    return request(server, token, f"/api/v1/submissions/{urllib.parse.quote(submission_id, safe='')}")


def submissions(server: str, token: str) -> list[dict[str, Any]]:
    return request(server, token, "/api/v1/submissions")["submissions"]


def listing_line(view: dict[str, Any]) -> str:
    """A submission in `segbench submissions`: id, phase, status, time, method, and what the public
    board released after it (where the phase shows scores) or a failed upload's error."""
    line = f"{view['id']}  {view['benchmark']}/{view['phase']}  {view['status']:<7}  {view['submitted_at']}  " \
           f"{view['method']}"
    ladder = view.get("ladder")
    if ladder and ladder["public_score"] is not None:
        line += f"  public {released_text(ladder['public_score'], ladder['decimals'])} ({ladder['note']})"
    if view["error"]:
        line += f"  error: {view['error'].splitlines()[0]}"
    return line


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
