"""What every route of ``/api/v1`` shares: the service's settings and store, the bearer token, the
body guard, and the error answers each route declares.

The body guard (``GuardedRoute``) runs before FastAPI parses a body: at most ``max_body`` bytes
(413), declared ``application/json`` or not declared at all (else 415: a cross-site form cannot
post JSON here), UTF-8 JSON without NaN and nested at most 64 levels (``tilelib.jsonin``, the
same reader as every other outside JSON; else 400). Only then does FastAPI validate the body
against its model, so a hostile body costs at most one bounded read and never a 500.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi.security import HTTPBearer

from referee.service.runs import RunStore
from referee.wire import MAX_MOVES, OPERATIONS, Error
from tilelib import jsonin
from tilelib.errors import BadInput, TilesError, TooLarge, UnsupportedMedia, http_status

MAX_BODY = 64 * 1024


@dataclass(frozen=True)
class Settings:
    """The service's limits and clock (``tiles referee serve`` options; tests pass their own ``today``)."""

    max_body: int = MAX_BODY
    max_moves: int = MAX_MOVES
    today: Callable[[], dt.date] | None = None
    access_log: str = "off"  # "off" | "text" | "json": one line per request on stderr


# Dependencies are ``async`` so FastAPI calls them on the event loop: a plain ``def`` would be sent
# to its thread pool, a hop per dependency per request (and a second thread near the store).
async def settings(request: Request) -> Settings:
    return request.app.state.settings


async def store(request: Request) -> RunStore:
    return request.app.state.store


class RunToken(HTTPBearer):
    """The run's bearer token (RFC 6750), as the OpenAPI's ``runToken`` scheme declares it.

    FastAPI's ``HTTPBearer`` answers None both for no credentials and for ``Bearer`` with nothing
    after it; the store must tell them apart (``RunStore.authorise``: 401 either way, but only the
    malformed one names ``invalid_request``). So: None when no ``Authorization`` header or another
    scheme is sent (RFC 6750 §3.1: no credentials of ours), else the text after ``Bearer`` as sent,
    which may be empty or malformed."""

    async def __call__(self, request: Request) -> str | None:  # type: ignore[override]
        scheme, _, rest = request.headers.get("authorization", "").strip().partition(" ")
        return rest.strip() if scheme.lower() == "bearer" else None


token = RunToken(
    auto_error=False,
    scheme_name="runToken",
    description="The run's secret token, returned once by POST /days/{day}/runs.",
)
REALM = 'Bearer realm="tiles"'


RETRY_UNAVAILABLE = 1  # seconds a 503's Retry-After asks for: the service itself waited ``runs.PATIENCE``
UNAVAILABLE = (
    "the runs database is busy or unavailable: send the request again after Retry-After seconds "
    "(moves with the same Idempotency-Key)"
)


def error_headers(err: BaseException, status: int) -> dict | None:
    """The headers of an error answer, or None. ``WWW-Authenticate``: every 401 has one (RFC 7235), with
    the RFC 6750 error code its exception names (``bearer_error``, ``runs``); so does a 403 that names
    one (a wrong token: ``invalid_token``). ``Retry-After``: every 429 (``quota``) and 503 (the runs
    database busy or away), in whole seconds."""
    out = {}
    code = getattr(err, "bearer_error", None)
    if status == 401 or code is not None:
        out["WWW-Authenticate"] = REALM + (f', error="{code}"' if code else "")
    if status == 429:
        out["Retry-After"] = str(getattr(err, "retry_after", 1))
    if status == 503:
        out["Retry-After"] = str(RETRY_UNAVAILABLE)
    return out or None


def public_line(err: TilesError, status: int) -> str:
    """What an answer says of ``err``: its own line for a client's error (4xx); for the service's own
    trouble (5xx) a fixed line — the message names the runs file's path or the database's address,
    and SQLite's or PostgreSQL's words, none of which is the client's business (the log has them)."""
    if status == 503:
        return UNAVAILABLE
    if status >= 500:
        return f"internal error: {type(err).__name__}"
    return str(err)


def error_answer(status: int, message: str, headers: dict | None = None) -> JSONResponse:
    """Every error answer of the API: ``{"error": "one line"}`` with ``status`` and ``headers``."""
    return JSONResponse({"error": " ".join(message.split()) or "error"}, status_code=status, headers=headers)


def tiles_error_answer(err: TilesError) -> JSONResponse:
    """The answer to one of the project's errors: the status of ``tilelib.errors.HTTP_STATUS``, the
    line of ``public_line``, the headers of ``error_headers``."""
    status = http_status(err)
    return error_answer(status, public_line(err, status), error_headers(err, status))


def client_address(request) -> str | None:
    """The client's address of a request (the API's, or the one an MCP tool call came in): the peer's,
    or the one a trusted proxy names in X-Forwarded-For (uvicorn's ``--forwarded-allow-ips``;
    ``tiles referee serve --trust-proxy``). What per-address quotas count."""
    client = getattr(request, "client", None)
    return client.host if client else None


async def address(request: Request) -> str | None:
    """``client_address`` as a route's dependency."""
    return client_address(request)


def _is_json(content_type: str) -> bool:
    msg = Message()
    msg["content-type"] = content_type
    sub = msg.get_content_subtype()
    return msg.get_content_maintype() == "application" and (sub == "json" or sub.endswith("+json"))


async def guard_body(request: Request, limit: int) -> None:
    """Read the body once within ``limit`` bytes and check its media type and JSON (see module doc);
    leaves the bytes cached on the request for FastAPI (an all-blank body counts as no body)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not (declared.isascii() and declared.isdigit()):  # "²".isdigit() is true; int() refuses it
            raise BadInput("Content-Length is not a number")
        if int(declared) > limit:
            raise TooLarge(f"request body of {int(declared)} bytes is over the limit of {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise TooLarge(f"request body is over the limit of {limit} bytes")
    if not bytes(body).strip():
        request._body = b""
        return
    ctype = request.headers.get("content-type")
    if ctype is not None and not _is_json(ctype):
        raise UnsupportedMedia(f"the body must be JSON sent as 'Content-Type: application/json', not {ctype[:60]!r}")
    jsonin.parse(body, "request body", limit)
    request._body = bytes(body)


class GuardedRoute(APIRoute):
    """An APIRoute whose requests with a body pass ``guard_body`` before anything else."""

    def get_route_handler(self):
        handler = super().get_route_handler()

        async def guarded(request: Request):
            if request.method in ("POST", "PUT", "PATCH"):
                await guard_body(request, request.app.state.settings.max_body)
            return await handler(request)

        return guarded


_MEANING = {
    400: "Malformed input: a path or query parameter, or a body off its schema.",
    401: "No usable token: no 'Authorization: Bearer TOKEN' header, another scheme, or an empty or "
    "malformed token (RFC 6750). The answer's WWW-Authenticate says 'Bearer realm=\"tiles\"', with "
    'error="invalid_request" for a malformed token.',
    403: 'A wrong token (WWW-Authenticate: Bearer error="invalid_token"), a run that takes no token here, '
    "or something secret until the day is over.",
    404: "Unknown day, run or tile.",
    409: "A move off the run's frontier (the batch is not recorded), or an Idempotency-Key reused with another body.",
    413: "A body or a batch over the service's limits.",
    415: "A body not sent as application/json.",
    429: "Over a fair-use quota (run creations per address, moves requests per run or per address): "
    "wait the seconds of the Retry-After header and send it again.",
    503: "The runs database is busy (another writer holds it) or unavailable: wait the seconds of the "
    "Retry-After header and send it again (a moves request with the same Idempotency-Key).",
}


_CHALLENGE = {
    401: {
        "description": 'The challenge: Bearer realm="tiles", and error="invalid_request" for a malformed token.',
        "required": True,
        "schema": {"type": "string"},
    },
    403: {
        "description": 'Only for a wrong token: Bearer realm="tiles", error="invalid_token".',
        "required": False,
        "schema": {"type": "string"},
    },
}
_RETRY = {
    "Retry-After": {
        "description": "Seconds to wait before sending the request again.",
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
    }
}


def errors(*statuses: int, auth: bool = False) -> dict:
    """The ``responses=`` of a route: each status with the one error model; ``auth`` (a write that
    needs the run's token) declares the ``WWW-Authenticate`` header of its 401 and 403."""
    out = {s: {"model": Error, "description": _MEANING[s]} for s in statuses}
    for s in statuses:
        if auth and s in _CHALLENGE:
            out[s]["headers"] = {"WWW-Authenticate": _CHALLENGE[s]}
        if s in (429, 503):
            out[s]["headers"] = _RETRY
    return out


def operation(router: APIRouter) -> Callable[[Callable], Callable]:
    """Declare the decorated handler as the operation of ``referee.wire.OPERATIONS`` that bears its
    name: its method, path, response model, summary, status and error answers all come from there
    (the one declaration the client reads too); the handler says only how it reads its parameters."""

    def declare(handler: Callable) -> Callable:
        op = OPERATIONS[handler.__name__]
        return router.api_route(
            op.path,
            methods=[op.method],
            response_model=op.answer,
            summary=op.summary,
            responses=errors(*op.refusals, auth=op.auth),
            status_code=None if op.status == 200 else op.status,  # None: FastAPI's own default
        )(handler)

    return declare
