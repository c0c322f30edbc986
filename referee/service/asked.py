"""Requests per run, for the leaderboard's efficiency (``runs.requests``, runs schema v4).

Every request that names a run (its score, frontier, a tile's view, its history or analyzer, a batch
of moves) counts one. Reads change nothing, so writing a row for each would double the database's
work; they are counted here, in memory, and added to the run's row in the transaction of the run's
next batch judged by this process (``Judge.record``, in the same row update as its move count; so a
batch that clears the board records, in ``runs.cleared_requests``, every request this process
answered for the run until then) and by the service's flusher, which every ``EVERY`` seconds
writes the counts that have waited ``STALE`` seconds for a batch (not sooner: its update would queue behind a playing
run's batch lock). With one
worker the counts are exact; with several, a clearing batch's snapshot leaves out the requests
another worker answered in the last few seconds (docs/DECISIONS.md, issue 54).
"""

from __future__ import annotations

import threading
import time
from collections import Counter

EVERY = 1.0
STALE = 3.0  # the flusher writes a run's count once it has waited this long for a batch to carry it

ADD = "UPDATE runs SET requests = requests + ? WHERE run = ?"


class Asked:
    """The requests counted per run and not yet in the database (thread-safe: batches are judged
    on the store's threads while the loop counts reads)."""

    def __init__(self) -> None:
        self._n: Counter[str] = Counter()
        self._since: dict[str, float] = {}  # run -> when its oldest pending request was counted
        self._lock = threading.Lock()

    def note(self, run: str) -> None:
        with self._lock:
            self._n[run] += 1
            self._since.setdefault(run, time.monotonic())

    def pending(self, run: str) -> int:
        with self._lock:
            return self._n.get(run, 0)

    def settle(self, run: str, n: int) -> None:
        """``n`` of ``run``'s requests are in the database now (its transaction committed)."""
        with self._lock:
            left = self._n.get(run, 0) - n
            if left > 0:
                self._n[run] = left
            else:
                self._n.pop(run, None)
                self._since.pop(run, None)

    def drain(self, older: float = 0.0) -> dict[str, int]:
        """The pending counts that have waited at least ``older`` seconds, handed over (``restore`` them
        if writing fails). The flusher takes only stale ones: a run being played gets its count written
        by its own next batch, and a flush that touched its row would queue behind that batch's lock."""
        now = time.monotonic()
        with self._lock:
            runs = [r for r, t in self._since.items() if now - t >= older]
            out = {r: self._n.pop(r) for r in runs if r in self._n}
            for r in runs:
                del self._since[r]
        return out

    def restore(self, counts: dict[str, int]) -> None:
        with self._lock:
            self._n.update(counts)
            now = time.monotonic()
            for r in counts:
                self._since.setdefault(r, now - STALE)


def write(rows, run: str, n: int) -> None:
    """Add ``n`` requests to ``run``'s row inside the caller's transaction (``rows`` = ``tx.write``); a
    batch adds its own with the move count instead (``Judge.record``)."""
    if n:
        rows(ADD, (n, run))
