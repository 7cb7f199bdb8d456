"""segbench.server.http_protocol: with httptools, a request's line and headers are bounded as h11
bounds them (16 KiB before they end), counted per request on a kept-alive connection and never
counting the body; against uvicorn serving a small app on a local socket."""

from __future__ import annotations

import socket
import threading
import time

import pytest

pytest.importorskip("httptools")

import uvicorn  # noqa: E402

from segbench.server.http_protocol import HEAD_LIMIT, PROTOCOL, BoundedHttpToolsProtocol  # noqa: E402

CALLS: list[int] = []


async def app(scope, receive, send):
    """Answers 200 with the size of the request's body; counts its calls."""
    if scope["type"] != "http":
        return
    size, more = 0, True
    while more:
        message = await receive()
        size, more = size + len(message.get("body", b"")), message.get("more_body", False)
    CALLS.append(size)
    body = str(size).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def port():
    listening = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, http=PROTOCOL, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield listening.getsockname()[1]
    server.should_exit = True
    thread.join(10)


def head(size: int, body: bytes = b"") -> bytes:
    """A POST whose line and headers are `size` bytes (a padding header makes up the rest)."""
    start = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nX-Pad: " % len(body)
    return start + b"a" * (size - len(start) - 4) + b"\r\n\r\n" + body


def answers(port: int, *requests: bytes, chunk: int = 1 << 20) -> bytes:
    """Everything the server sends back until it closes or stops sending for a second."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        for request in requests:
            for i in range(0, len(request), chunk):
                try:
                    connection.sendall(request[i:i + chunk])
                except (BrokenPipeError, ConnectionResetError):  # refused and closed before the rest was sent
                    break
            time.sleep(0.2)
        connection.settimeout(1)
        received = b""
        try:
            while block := connection.recv(65536):
                received += block
        except (TimeoutError, ConnectionResetError):
            pass
        return received


def test_the_protocol_is_the_bounded_one_when_httptools_is_installed():
    assert PROTOCOL is BoundedHttpToolsProtocol


def test_a_head_within_the_bound_is_served_and_a_longer_one_refused_unanswered_by_the_app(port):
    CALLS.clear()
    assert answers(port, head(HEAD_LIMIT - 1024)).startswith(b"HTTP/1.1 200 ")
    refused = answers(port, head(200_000), chunk=1024)
    assert refused.startswith(b"HTTP/1.1 400 ") and b"content-type: application/json\r\n" in refused
    assert refused.endswith(b'\r\n\r\n{"error":"Request line and headers too large."}')
    assert b"x-content-type-options: nosniff\r\n" in refused and b"content-security-policy: default-src 'none'" in refused
    assert CALLS == [0]


def test_a_request_the_parser_refuses_is_answered_in_json(port):
    # A body longer than its Content-Length: the rest, parsed as the next request, is no request.
    refused = answers(port, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab\x00\x01 garbage\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 400 Bad Request\r\n") and b"content-type: application/json\r\n" in refused
    assert refused.endswith(b'\r\n\r\n{"error":"Invalid HTTP request received."}')


def test_each_request_of_a_kept_alive_connection_has_the_whole_bound_and_the_body_is_not_counted(port):
    CALLS.clear()
    body = b"b" * 100_000
    served = answers(port, head(HEAD_LIMIT - 4096, body), head(HEAD_LIMIT - 4096), head(HEAD_LIMIT - 4096, body))
    assert served.count(b"HTTP/1.1 200 ") == 3
    assert CALLS == [100_000, 0, 100_000]
