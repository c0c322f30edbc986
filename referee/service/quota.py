"""Fair use: how many run creations and moves requests one address or one run's token may make per
window, counted in the runs database so that every worker and every host behind a proxy sees the
same counts (FORMAT §12, DEPLOY).

A quota is a fixed window: ``window`` seconds numbered from the epoch; a counter row per
(window, key) is added to in the transaction that does the work it limits (a run's creation, a
batch of moves), so a refused request stores nothing and costs no extra commit. Past its limit the
request is ``RateLimited`` (HTTP 429) with ``Retry-After``: the seconds to the next window.
``players.client`` waits that long and sends it again.

Keys: ``runs@ADDRESS`` (runs created by one client address), ``moves#RUN`` (moves requests of one
run: its token is the only one that may send them) and ``moves@ADDRESS#SHARD`` (moves requests
of one address, summed over ``SHARDS`` rows picked by run, so the runs of one address behind one
proxy do not queue on one row lock in PostgreSQL). A limit of 0 turns that quota off.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from tilelib.errors import RateLimited

SHARDS = 8


@dataclass(frozen=True)
class Quotas:
    """The limits of one service (``tiles referee serve --quota-*``); 0 is no limit."""

    runs_per_address: int = 30  # run creations per address per window
    moves_per_token: int = 1800  # moves requests per run (its token) per window
    moves_per_address: int = 18000  # moves requests per address per window, over all its runs
    window: float = 60.0  # seconds

    @property
    def off(self) -> bool:
        return not (self.runs_per_address or self.moves_per_token or self.moves_per_address)


NO_QUOTAS = Quotas(0, 0, 0)


def window_of(now: float, window: float) -> tuple[int, float]:
    """(the window's number, seconds until the next one starts) at ``now``."""
    k = math.floor(now / window)
    return k, (k + 1) * window - now


def retry_after(seconds: float) -> int:
    """Whole seconds for a ``Retry-After`` header: at least 1, rounded up."""
    return max(1, math.ceil(seconds))


def _shard(run: str) -> int:
    return zlib.crc32(run.encode()) % SHARDS


_CHARGE = (
    "INSERT INTO quota (win, key, used) VALUES (?, ?, 1) "
    "ON CONFLICT (win, key) DO UPDATE SET used = quota.used + 1 RETURNING used"
)


def charge(
    rows: Callable,
    q: Quotas,
    *,
    address: str | None,
    run: str | None = None,
    creating: bool = False,
    now: float | None = None,
) -> None:
    """Count one request inside the caller's transaction (``rows`` is ``Tx.rows``): a run's creation
    (``creating``) from ``address``, or a moves request of ``run`` from ``address``. RateLimited (429)
    past a limit; the caller's transaction then rolls back, the count with it."""
    now = time.time() if now is None else now
    win, left = window_of(now, q.window)

    def over(what: str, used: int, limit: int) -> None:
        if limit and used > limit:
            raise RateLimited(
                f"{what}: {limit} per {q.window:g} s; try again in {retry_after(left)} s", retry_after=retry_after(left)
            )

    if creating:
        if q.runs_per_address and address:
            ((used,),) = rows(_CHARGE, (win, f"runs@{address}"))
            over(f"too many runs created from {address}", used, q.runs_per_address)
        return
    if q.moves_per_token and run:
        ((used,),) = rows(_CHARGE, (win, f"moves#{run}"))
        over(f"too many moves requests for run {run}", used, q.moves_per_token)
    if q.moves_per_address and address:
        prefix = f"moves@{address}#"
        rows(_CHARGE, (win, f"{prefix}{_shard(run or '')}"))
        ((used,),) = rows(
            "SELECT coalesce(sum(used), 0) FROM quota WHERE win = ? AND key >= ? AND key < ?",
            (win, prefix + "0", prefix + str(SHARDS)),
        )
        over(f"too many moves requests from {address}", int(used), q.moves_per_address)


def sweep(rows: Callable, q: Quotas, now: float | None = None) -> None:
    """Forget the counters of windows before the previous one (run with a creation, so the table holds
    about two windows of keys)."""
    now = time.time() if now is None else now
    win, _ = window_of(now, q.window)
    rows("DELETE FROM quota WHERE win < ?", (win - 1,))
