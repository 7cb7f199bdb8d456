"""The HTTP protocol `segbench server run` serves with: uvicorn's httptools protocol (a compiled
parser: a kept board's read costs about half the CPU of h11's) when httptools is installed,
bounded as h11 bounds a request's head; h11 otherwise.

h11 refuses a request whose line and headers pass 16 KiB before they end; httptools alone buffers
a head of any size (a 200 kB header would be read whole and answered). The bounded protocol
counts the bytes received while a head is incomplete and refuses it with 400, closing the
connection, once they pass the same bound: read no further than the chunk that passed it.

What the protocol itself refuses (a head too large, a request it cannot parse: a body longer than
its Content-Length, a malformed line) is answered as the app answers every error, a JSON
`{"error": message}` with the headers every answer carries (server/headers.py), not uvicorn's
plain text."""

from __future__ import annotations

import json
from importlib.util import find_spec

from .headers import HEADERS

HEAD_LIMIT = 16 * 1024  # h11's default bound on an incomplete event, which uvicorn keeps

if find_spec("httptools") is not None:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.head_bytes: int | None = 0  # received of the head in progress; None once its headers ended

        def data_received(self, data: bytes) -> None:
            if self.head_bytes is not None:
                self.head_bytes += len(data)
            super().data_received(data)
            if self.head_bytes is not None and self.head_bytes > HEAD_LIMIT and not self.transport.is_closing():
                self.send_400_response("Request line and headers too large.")

        def send_400_response(self, msg: str) -> None:
            body = json.dumps({"error": msg}, separators=(",", ":")).encode()  # as the app's JSONResponse
            headers = [*self.server_state.default_headers, *HEADERS]
            head = [b"HTTP/1.1 400 Bad Request", *(name + b": " + value for name, value in headers),
                    b"content-type: application/json", b"content-length: %d" % len(body), b"connection: close"]
            self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
            self.transport.close()

        def on_headers_complete(self) -> None:
            self.head_bytes = None
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self.head_bytes = 0  # the next request's head, on a kept-alive connection

    PROTOCOL: type | str = BoundedHttpToolsProtocol
else:
    PROTOCOL = "h11"
