"""The headers every response of the server carries, for the browser's protection: no page is
framed by another site (clickjacking an upload or a selection), no body is sniffed as another type,
no URL (a submission's id) leaves in a Referer, and the pages run only their own inline style and
sorting script: the Content-Security-Policy names each by its SHA-256, so markup that slipped past
the escaping could neither run a script nor load anything."""

from __future__ import annotations

import base64
import hashlib
import re

from .pages import board_page, frame
from .parts import PUBLIC

INLINE = re.compile(r"<(style|script)>(.*?)</\1>", re.S)


def content_security_policy() -> str:
    """The policy of every page: the SHA-256 of each inline block of the two page layouts (their
    texts are constants)."""
    sources: dict[str, set[str]] = {"style": set(), "script": set()}
    for html in (frame("", ""), board_page("", "", [], PUBLIC)):
        for kind, text in INLINE.findall(html):
            sources[kind].add(f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'")
    return ("default-src 'none'; " + "".join(f"{kind}-src {' '.join(sorted(found))}; " for kind, found in sources.items())
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


HEADERS = [(b"content-security-policy", content_security_policy().encode()), (b"x-frame-options", b"DENY"),
           (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]


class SecurityHeaders:
    """ASGI middleware: HEADERS added to every HTTP response (the body streams through untouched)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
