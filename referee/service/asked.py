"""Requests per run, for the leaderboard's efficiency (``runs.requests``, runs schema v4).

Every request that names a run (its score, frontier, a tile's view, its history or analyzer, a batch
of moves) counts one. Reads change nothing, so writing a row for each would double the database's
work; they are counted here, in memory, and added to the run's row in the transaction of the run's
next batch judged by this process (``Judge.record``, in the same row update as its move count; so a
batch that clears the board records, in ``runs.cleared_requests``, every request this process
answered for the run until then) and by the
service's flusher every ``EVERY`` seconds. With one worker the counts are exact; with several, a
clearing batch's snapshot leaves out the requests another worker answered in the last ``EVERY``
seconds (docs/DECISIONS.md, issue 54).
"""

from __future__ import annotations

import threading
from collections import Counter

EVERY = 1.0

ADD = "UPDATE runs SET requests = requests + ? WHERE run = ?"


class Asked:
    """The requests counted per run and not yet in the database (thread-safe: batches are judged
    on the store's threads while the loop counts reads)."""

    def __init__(self) -> None:
        self._n: Counter[str] = Counter()
        self._lock = threading.Lock()

    def note(self, run: str) -> None:
        with self._lock:
            self._n[run] += 1

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

    def drain(self) -> dict[str, int]:
        """Every pending count, handed over (``restore`` them if writing fails)."""
        with self._lock:
            out, self._n = dict(self._n), Counter()
        return out

    def restore(self, counts: dict[str, int]) -> None:
        with self._lock:
            self._n.update(counts)


def write(rows, run: str, n: int) -> None:
    """Add ``n`` requests to ``run``'s row inside the caller's transaction (``rows`` = ``tx.rows``); a
    batch adds its own with the move count instead (``Judge.record``)."""
    if n:
        rows(ADD, (n, run))
