"""The browser security headers of every answer of the service, set in one place.

``SecurityHeaders`` wraps the whole app (``app.RefereeApp``: outside Starlette's error middleware, so
a 500 carries them too) and adds ``HEADERS`` to the start of every HTTP answer: the page, its
static files, the API, ``/docs``, ``/openapi.json``, the MCP tools and every error alike. No route
sets them itself.

The Content-Security-Policy fits what the pages are: the play page and ``/docs`` load scripts and
styles only from this service (``/static``, no inline script, style or event handler), talk only
to it, and draw into canvases; the page's favicon is an empty ``data:`` image. Nothing may frame
them, change their base URL, submit a form anywhere, or load a plugin.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)

HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
)


class SecurityHeaders:
    """ASGI middleware: ``HEADERS`` on the start of every HTTP answer (module doc)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS:
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
