"""A Python client of the referee service (``tiles referee serve``, ``/api/v1``), over httpx.

One typed method per endpoint, returning the service's own models (``referee.service.models``);
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
to ``max_wait`` seconds in all per call (then ``RateLimited``, exit 4).

    from players.client import Client
    with Client("http://127.0.0.1:8000") as c:
        run = c.create_run("2026-11-29", player="ann")
        view = c.run_tile(run.run, c.frontier(run.run).tiles[0])
        result = c.moves(run.run, [(view.tile, "0101…")])
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any, Iterable, Optional, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from referee.service import models as m
from tilelib.errors import BadInput, RateLimited, Unreachable, error_for_status

API = "/api/v1"
T = TypeVar("T", bound=BaseModel)


class Client:
    """The service at ``url`` (its root, e.g. ``http://127.0.0.1:8000``; a trailing ``/api/v1`` is fine)."""

    def __init__(self, url: str, *, timeout: float = 30.0, retries: int = 4, backoff: float = 0.25,
                 max_wait: float = 600.0, transport: Optional[httpx.BaseTransport] = None,
                 verify: Any = True) -> None:
        base = url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise BadInput(f"--url must be an http:// or https:// address, not {url[:80]!r}")
        base = base.removesuffix(API)
        self.retries, self.backoff, self.max_wait = retries, backoff, max_wait
        self.waited = 0.0                     # seconds spent waiting out 429s (Retry-After)
        # verify: True (certifi's CAs, or SSL_CERT_FILE's: one context shared by every client of the process,
        # made once — building it took ~27 ms a client, even for http://), or an ssl.SSLContext of one's own
        self.http = httpx.Client(base_url=base + API, timeout=timeout, transport=transport,
                                 verify=_default_tls() if verify is True else verify)
        self.tokens: dict[str, str] = {}      # run -> token, kept from create_run
        self.requests = 0                     # HTTP requests sent, retries included

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ the one request path

    def _call(self, method: str, path: str, *, json: Any = None, params: dict | None = None,
              headers: dict | None = None, safe: bool = True) -> Any:
        """Send one request (with retries, see the module doc) and return the answer's JSON; raise the
        project's error for a 4xx, ``Unreachable`` when every attempt failed. ``safe``: may be sent
        again after a failure mid-way (reads, and writes that carry an idempotency key)."""
        last, failures, waited = "", 0, 0.0
        while failures <= self.retries:
            if failures:
                time.sleep(min(self.backoff * 2 ** (failures - 1), 5.0))
            self.requests += 1
            try:
                r = self.http.request(method, path, json=json, params=params, headers=headers)
            except httpx.ConnectError as e:            # refused or unresolvable: the request never left
                last, failures = f"cannot connect to {self.http.base_url} ({e})", failures + 1
                continue
            except httpx.TransportError as e:          # dropped or timed out mid-way
                last, failures = f"{type(e).__name__} talking to {self.http.base_url} ({e})", failures + 1
                if not safe:
                    break
                continue
            if r.status_code == 429:              # a quota: nothing was stored; wait as told, then again
                pause = _retry_after(r)
                if waited + pause > self.max_wait:
                    raise RateLimited(f"429: {_message(r)} (waited {waited:.0f} s in all)", retry_after=int(pause))
                time.sleep(pause)
                waited += pause
                self.waited += pause
                continue
            if r.status_code >= 500:
                last, failures = f"{r.status_code} from {self.http.base_url}{path}: {_message(r)}", failures + 1
                if not safe:
                    break
                continue
            if r.status_code >= 400:
                raise error_for_status(r.status_code, _message(r))
            try:
                return r.json()
            except ValueError:
                raise Unreachable(f"{self.http.base_url}{path} answered {r.status_code} with a body that is "
                                  "not JSON: is this a tiles referee service?") from None
        raise Unreachable(f"{last}; gave up after {failures} attempt(s)")

    def _get(self, model: type[T], path: str, **params) -> T:
        return _typed(model, self._call("GET", path, params={k: v for k, v in params.items() if v is not None}))

    def _auth(self, run: str) -> dict:
        token = self.tokens.get(run)
        return {"Authorization": f"Bearer {token}"} if token else {}

    # ------------------------------------------------------------ days

    def days(self) -> list[m.DaySummary]:
        return self._get(m.Days, "/days").root

    def board(self, day: str) -> m.PublicBoard:
        return self._get(m.PublicBoard, f"/days/{day}")

    def cells(self, day: str) -> m.Cells:
        return self._get(m.Cells, f"/days/{day}/cells")

    def day_tile(self, day: str, tile: int) -> m.TileView:
        return self._get(m.TileView, f"/days/{day}/tiles/{int(tile)}")

    def solution(self, day: str, tile: int) -> m.Solution:
        return self._get(m.Solution, f"/days/{day}/tiles/{int(tile)}/solution")

    def manifest(self, day: str) -> m.ManifestBody:
        return self._get(m.ManifestBody, f"/days/{day}/manifest")

    def leaderboard(self, day: str, limit: int = 100) -> m.Leaderboard:
        return self._get(m.Leaderboard, f"/days/{day}/leaderboard", limit=limit)

    def day_analysis(self, day: str, bucket: float = 60.0) -> m.DayAnalysis:
        return self._get(m.DayAnalysis, f"/days/{day}/analysis", bucket=bucket)

    def create_run(self, day: str, player: Optional[str] = None) -> m.RunCreated:
        """A new run of ``day``; its token is kept for this run's moves."""
        body = {"player": player} if player is not None else None
        out = _typed(m.RunCreated, self._call("POST", f"/days/{day}/runs", json=body, safe=False))
        self.tokens[out.run] = out.token
        return out

    def use_run(self, run: str, token: str) -> None:
        """Play an existing run (made elsewhere) with its token."""
        self.tokens[run] = token

    # ------------------------------------------------------------ runs

    def score(self, run: str) -> m.Score:
        return self._get(m.Score, f"/runs/{run}")

    def frontier(self, run: str) -> m.Frontier:
        return self._get(m.Frontier, f"/runs/{run}/frontier")

    def run_tile(self, run: str, tile: int) -> m.TileView:
        return self._get(m.TileView, f"/runs/{run}/tiles/{int(tile)}")

    def moves(self, run: str, moves: Iterable[tuple[int, str]], *, key: Optional[str] = None) -> m.MovesResult:
        """Submit a batch ``[(tile, cells), …]``; one ``Idempotency-Key`` (``key`` or a fresh UUID) for
        every attempt, so a retry is answered, not judged again."""
        body = {"moves": [{"tile": int(t), "cells": c} for t, c in moves]}
        headers = {**self._auth(run), "Idempotency-Key": f'"{key or uuid.uuid4()}"'}
        return _typed(m.MovesResult, self._call("POST", f"/runs/{run}/moves", json=body, headers=headers))

    def history(self, run: str, after: int = 0, limit: int = 100) -> m.History:
        return self._get(m.History, f"/runs/{run}/history", after=after, limit=limit)

    def run_analysis(self, run: str) -> m.RunAnalysis:
        return self._get(m.RunAnalysis, f"/runs/{run}/analysis")


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
    """The seconds a 429's ``Retry-After`` asks for (delta-seconds; 1 if absent or an HTTP date)."""
    value = r.headers.get("retry-after", "").strip()
    return float(min(int(value), 3600)) if value.isdigit() else 1.0


def _typed(model: type[T], data: Any) -> T:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise Unreachable(f"the service's answer is not a {model.__name__}: "
                          f"{e.errors()[0].get('msg', 'invalid')}") from None
