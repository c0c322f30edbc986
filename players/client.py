"""Python clients of the referee service (``tiles referee serve``, ``/api/v1``), over httpx:
``Client`` (blocking) and ``AsyncClient`` (asyncio), with the same methods, retries, keys and waits.

One typed method per endpoint, returning the service's own models (``referee.wire``);
the token of every run it creates is kept, so ``moves(run, …)`` just works. Failures come back as
the project's exception types (``tilelib.errors``: the inverse of the service's ``HTTP_STATUS``,
so a 404 is ``NotFound``, a 403 ``Forbidden``, …) with the service's one-line message, and a
service that does not answer is ``Unreachable`` — each maps to an exit code for ``tiles play``.

Retries: a request that fails on the way (connection refused or dropped, a timeout) or gets a 5xx
is sent again after an exponential backoff, ``retries`` times. Reads are safe to repeat; a moves
request carries an ``Idempotency-Key`` made once per call and sent with every attempt, so the
service answers a retry with its first answer and never scores a move twice. Creating a run is
retried only when the request surely never arrived (the connection was refused).

Fair use: a 429 (a quota of the service, ``referee.service.quota``) stored nothing, so any request
is sent again after the ``Retry-After`` seconds it names; such waits do not count as retries, up
to ``max_wait`` seconds in all per call (then ``RateLimited``, exit 4); each wait is one warning line
on the ``players.client`` logger (so an online Gym ``reset`` that waits on the quota of run creations
says so). A 503 with ``Retry-After``
(the runs database busy or away) stored nothing either: any request is sent again after the
seconds it names (at most 5), and that counts as a retry.

    from players.client import Client
    with Client("http://127.0.0.1:8000") as c:
        run = c.create_run("2026-11-29", player="ann")
        view = c.run_tile(run.run, c.frontier(run.run).tiles[0])
        result = c.moves(run.run, [(view.tile, "0101…")])

``AsyncClient`` is the same with ``async with`` and ``await`` before each call. Both are one
``Endpoints`` (what each method asks: a ``Call``) over one ``Attempts`` (what to do after each
attempt), so the two cannot drift apart; only the sending and the sleeping differ.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from referee import wire as m
from tilelib.errors import BadInput, RateLimited, Unreachable, error_for_status

API = m.API
T = TypeVar("T", bound=BaseModel)
# One line per wait out a 429 (Python's ``logging``; a script shows it with ``logging.basicConfig()``,
# and warnings reach stderr even without): a reset or a batch that pauses says why.
LOG = logging.getLogger("players.client")


@dataclass(frozen=True)
class Call:
    """One method's request: what to send, whether it may be sent again after a failure mid-way
    (``safe``: reads, and writes with an idempotency key), the model of its answer and what to make
    of the typed answer (``then``)."""

    method: str
    path: str
    model: type[BaseModel]
    params: dict | None = None
    json: Any = None
    headers: dict | None = None
    safe: bool = True
    then: Callable[[Any], Any] | None = None


class Attempts:
    """The one retry policy (module doc), as a state both clients step through: ``pause()`` before
    each attempt, then ``failed(error)`` or ``answered(response)``, each saying the next move."""

    AGAIN, DONE = "again", "done"

    def __init__(self, client: Endpoints, call: Call) -> None:
        self.client, self.call = client, call
        self.failures, self.waited, self.wait, self.last = 0, 0.0, 0.0, ""

    def more(self) -> bool:
        return self.failures <= self.client.retries

    def pause(self) -> float:
        """Seconds to sleep before the next attempt (a backoff after failures, a 429's Retry-After)."""
        out, self.wait = self.wait, 0.0
        if self.failures and not out:
            out = min(self.client.backoff * 2 ** (self.failures - 1), 5.0)
        return out

    def failed(self, e: httpx.TransportError) -> str:
        base = self.client.http.base_url
        self.failures += 1
        if isinstance(e, httpx.ConnectError):  # refused or unresolvable: the request never left
            self.last = f"cannot connect to {base} ({e})"
            return self.AGAIN
        self.last = f"{type(e).__name__} talking to {base} ({e})"  # dropped or timed out mid-way
        return self.AGAIN if self.call.safe else self.DONE

    def answered(self, r: httpx.Response) -> tuple[str, Any]:
        """(AGAIN, None), (DONE, None) to give up, or (DONE, the typed answer); raises the error of a 4xx."""
        if r.status_code == 429:  # a quota: nothing was stored; wait as told, then again
            pause = _retry_after(r)
            if self.waited + pause > self.client.max_wait:
                raise RateLimited(f"429: {_message(r)} (waited {self.waited:.0f} s in all)", retry_after=int(pause))
            self.wait, self.waited = pause, self.waited + pause
            self.client.waited += pause
            LOG.warning(
                "%s %s: over a fair-use quota (429: %s); waiting %.0f s as Retry-After asks, then again",
                self.call.method,
                self.call.path,
                _message(r),
                pause,
            )
            return self.AGAIN, None
        if r.status_code == 503 and "retry-after" in r.headers:
            # the runs database could not take the request now: the service stored nothing and says
            # when to come back, so any call (a run's creation too) is sent again, as a retry
            self.failures += 1
            self.last = f"503 from {self.client.http.base_url}{self.call.path}: {_message(r)}"
            self.wait = min(_retry_after(r), 5.0)
            return self.AGAIN, None
        if r.status_code >= 500:
            self.failures += 1
            self.last = f"{r.status_code} from {self.client.http.base_url}{self.call.path}: {_message(r)}"
            return (self.AGAIN if self.call.safe else self.DONE), None
        if r.status_code >= 400:
            raise error_for_status(r.status_code, _message(r))
        try:
            data = r.json()
        except ValueError:
            raise Unreachable(
                f"{self.client.http.base_url}{self.call.path} answered {r.status_code} with a body "
                "that is not JSON: is this a tiles referee service?"
            ) from None
        out = _typed(self.call.model, data)
        return self.DONE, (self.call.then(out) if self.call.then else out)

    def gave_up(self) -> Unreachable:
        return Unreachable(f"{self.last}; gave up after {self.failures} attempt(s)")


class Endpoints:
    """Every endpoint as a method that describes its ``Call`` and hands it to ``_send`` — which
    ``Client`` answers with the typed answer and ``AsyncClient`` with an awaitable of it."""

    HTTP: type = httpx.Client  # the httpx client class the subclass sends with

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        retries: int = 4,
        backoff: float = 0.25,
        max_wait: float = 600.0,
        transport: Any = None,
        verify: Any = True,
    ) -> None:
        base = url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise BadInput(f"--url must be an http:// or https:// address, not {url[:80]!r}")
        self.base = base.removesuffix(API) + API
        self.retries, self.backoff, self.max_wait = retries, backoff, max_wait
        self.waited = 0.0  # seconds spent waiting out 429s (Retry-After)
        self.tokens: dict[str, str] = {}  # run -> token, kept from create_run
        self.requests = 0  # HTTP requests sent, retries included
        # verify: True (certifi's CAs, or SSL_CERT_FILE's: one context shared by every client of the process,
        # made once — building one took ~27 ms a client, even for http://), or an ssl.SSLContext of one's own
        self.http = self.HTTP(
            base_url=self.base,
            timeout=timeout,
            transport=transport,
            verify=_default_tls() if verify is True else verify,
        )

    def _send(self, call: Call) -> Any:
        raise NotImplementedError

    def _call(self, name: str, path: dict, *, query: dict | None = None, **call: Any):
        """The operation ``name`` of ``wire.OPERATIONS`` (its method, path and answer's model as the
        service declares them) with the ``path`` parameters, the ``query`` ones that are set and the
        rest of the ``Call``."""
        op = m.OPERATIONS[name]
        params = {k: v for k, v in (query or {}).items() if v is not None}
        return self._send(Call(op.method, op.path.format(**path), op.answer, params=params or None, **call))

    def _auth(self, run: str) -> dict:
        token = self.tokens.get(run)
        return {"Authorization": f"Bearer {token}"} if token else {}

    # ------------------------------------------------------------ days

    def days(self):
        """-> list[DaySummary]"""
        return self._call("days", {}, then=lambda d: d.root)

    def board(self, day: str):
        """-> PublicBoard"""
        return self._call("board", {"day": day})

    def cells(self, day: str):
        """-> Cells"""
        return self._call("cells", {"day": day})

    def day_tile(self, day: str, tile: int):
        """-> TileView"""
        return self._call("day_tile", {"day": day, "tile": int(tile)})

    def solution(self, day: str, tile: int):
        """-> Solution"""
        return self._call("solution", {"day": day, "tile": int(tile)})

    def manifest(self, day: str):
        """-> ManifestBody"""
        return self._call("manifest", {"day": day})

    def leaderboard(self, day: str, limit: int = 100, by: str = "reward"):
        """-> Leaderboard, in ``by``'s order: reward, batches, requests or time"""
        return self._call("leaderboard", {"day": day}, query={"limit": limit, "by": by})

    def day_analysis(self, day: str, bucket: float = 60.0):
        """-> DayAnalysis"""
        return self._call("day_analysis", {"day": day}, query={"bucket": bucket})

    def create_run(self, day: str, player: str | None = None):
        """-> RunCreated: a new run of ``day``; its token is kept for this run's moves. Sent again only
        when the request surely never arrived (a refused connection)."""
        body = {"player": player} if player is not None else None
        return self._call("create_run", {"day": day}, json=body, safe=False, then=self._keep)

    def _keep(self, out: m.RunCreated) -> m.RunCreated:
        self.tokens[out.run] = out.token
        return out

    def use_run(self, run: str, token: str) -> None:
        """Play an existing run (made elsewhere) with its token."""
        self.tokens[run] = token

    # ------------------------------------------------------------ runs

    def score(self, run: str):
        """-> Score"""
        return self._call("score", {"run": run})

    def frontier(self, run: str):
        """-> Frontier"""
        return self._call("frontier", {"run": run})

    def run_tile(self, run: str, tile: int):
        """-> TileView"""
        return self._call("run_tile", {"run": run, "tile": int(tile)})

    def moves(self, run: str, moves: Iterable[tuple[int, str]], *, key: str | None = None):
        """-> MovesResult: submit a batch ``[(tile, cells), …]``; one ``Idempotency-Key`` (``key`` or a
        fresh UUID) for every attempt, so a retry is answered, not judged again."""
        body = {"moves": [{"tile": int(t), "cells": c} for t, c in moves]}
        headers = {**self._auth(run), "Idempotency-Key": f'"{key or uuid.uuid4()}"'}
        return self._call("moves", {"run": run}, json=body, headers=headers)

    def history(self, run: str, after: int = 0, limit: int = 100):
        """-> History"""
        return self._call("history", {"run": run}, query={"after": after, "limit": limit})

    def run_analysis(self, run: str):
        """-> RunAnalysis"""
        return self._call("run_analysis", {"run": run})


class Client(Endpoints):
    """The service at ``url`` (its root, e.g. ``http://127.0.0.1:8000``; a trailing ``/api/v1`` is fine),
    blocking. ``verify``: True (the process's one default TLS context), or an ``ssl.SSLContext`` of
    one's own; ``transport``: an ``httpx.BaseTransport`` (tests)."""

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _send(self, call: Call) -> Any:
        tries = Attempts(self, call)
        while tries.more():
            pause = tries.pause()
            if pause:
                time.sleep(pause)
            self.requests += 1
            try:
                r = self.http.request(call.method, call.path, json=call.json, params=call.params, headers=call.headers)
            except httpx.TransportError as e:
                if tries.failed(e) == Attempts.DONE:
                    break
                continue
            what, out = tries.answered(r)
            if what == Attempts.DONE:
                if out is None:
                    break
                return out
        raise tries.gave_up()


class AsyncClient(Endpoints):
    """``Client`` for asyncio: the same methods, each awaited; ``async with AsyncClient(url) as c``
    (``transport``: an ``httpx.AsyncBaseTransport``)."""

    HTTP = httpx.AsyncClient

    async def close(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def _send(self, call: Call) -> Any:
        tries = Attempts(self, call)
        while tries.more():
            pause = tries.pause()
            if pause:
                await asyncio.sleep(pause)
            self.requests += 1
            try:
                r = await self.http.request(
                    call.method, call.path, json=call.json, params=call.params, headers=call.headers
                )
            except httpx.TransportError as e:
                if tries.failed(e) == Attempts.DONE:
                    break
                continue
            what, out = tries.answered(r)
            if what == Attempts.DONE:
                if out is None:
                    break
                return out
        raise tries.gave_up()


def _message(r: httpx.Response) -> str:
    """The service's one line (``{"error": …}``), or the start of whatever else came back."""
    try:
        body = r.json()
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            return body["error"]
    except ValueError:
        pass
    return " ".join(r.text[:200].split()) or r.reason_phrase


_TLS: list = []
_TLS_LOCK = threading.Lock()


def _default_tls():
    """The process's one default TLS context (httpx's: certifi's CAs, or ``SSL_CERT_FILE``'s), made on
    first use; a context may be shared by any number of clients and threads."""
    with _TLS_LOCK:
        if not _TLS:
            _TLS.append(httpx.create_ssl_context())
        return _TLS[0]


def _retry_after(r: httpx.Response) -> float:
    """The seconds a 429's or 503's ``Retry-After`` asks for: delta-seconds in ASCII digits, at most an
    hour; 1 if absent, an HTTP date or anything else (``'²'.isdigit()`` is true: not a number here)."""
    value = r.headers.get("retry-after", "").strip()
    return float(min(int(value), 3600)) if _DELTA_SECONDS.fullmatch(value) else 1.0


_DELTA_SECONDS = re.compile(r"[0-9]{1,9}", re.ASCII)


def _typed(model: type[T], data: Any) -> T:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise Unreachable(
            f"the service's answer is not a {model.__name__}: {e.errors()[0].get('msg', 'invalid')}"
        ) from None
