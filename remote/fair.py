"""A push never publishes a fresh board that lost a race (FORMAT §11; the fair rule, ``tilelib.spent``).

Two machines can build on the same remote state at once. If both boards are ``fresh`` and place
the same n >= 10 solution, or both are boards of the same day, only one may be published: the
one whose push swaps HEAD first. The second push has merged the first's rows before it uploads
anything (``sync.push`` catches up on every attempt), so it checks, for every fresh manifest the
remote does not hold yet (rowid past the mark), what ``referee verify`` would: its solutions
against the spent rows of the boards the library now holds (``tilelib.spent.unfair``), and that
the remote did not publish another board for its day under the same seed commitment
(``MergeStats.conflicting``): the same operator's other machine. A board of the day under another
commitment is another operator's day (FORMAT §9), not a race this board lost: it neither withdraws
this board nor takes its place, so whoever can write the remote cannot choose this operator's day.

A board that fails is **withdrawn**: its manifests row is removed from the local library — it was
never published — or replaced by the remote's board of its day, so the file agrees with the
remote again and the next build of that day starts clean. Its tiles and spent rows stay (rows are
never lost; a withdrawn board's spent rows spend nothing for ``verify``, which counts only boards
the library holds, and only keep a few solutions out of later boards). Then the push refuses,
remote untouched: ``BoardLostRace``, exit 5, one line naming the day and what it lost to.
"""

from __future__ import annotations

from tilelib.db import atomic
from tilelib.errors import VerificationFailed
from tilelib.spent import board_solutions, unfair
from tilelib.store import Library


class BoardLostRace(VerificationFailed):
    """A fresh board another machine's published board spent first (exit 5): withdrawn, not pushed."""


def refuse_lost_boards(lib: Library, since: int, conflicting) -> None:
    """Withdraw and refuse (``BoardLostRace``) the first fresh manifest past rowid ``since`` that
    lost a race; ``conflicting``: the remote's manifests rows of days the local file holds
    differently (``MergeStats.conflicting``)."""
    from referee.manifest import from_json

    theirs = {r[0]: tuple(r) for r in conflicting}  # day -> (day, seed_commit, json, created)
    rows = lib.conn.execute(
        "SELECT rowid, day, json FROM manifests WHERE rowid > ? ORDER BY rowid", (since,)
    ).fetchall()
    for _rowid, day, text in rows:
        m = from_json(text)
        if m.policy != "fresh":
            continue
        race = day in theirs and theirs[day][1] == m.seed_commit  # the same operator's other machine
        if race:
            why: str | None = "another machine published a board of that day first"
        else:
            why = unfair(lib.conn, m.day, board_solutions(lib.conn, list(m.hashes)))
        if why is None:
            continue
        with atomic(lib.conn):
            if race:
                lib.conn.execute(
                    "INSERT OR REPLACE INTO manifests (day, seed_commit, json, created) VALUES (?,?,?,?)", theirs[day]
                )
            else:
                lib.conn.execute("DELETE FROM manifests WHERE day = ?", (day,))
        raise BoardLostRace(
            f"push refused, the remote is untouched: the fresh board of {day} lost a race ({why}); "
            f"it is withdrawn from the library: build {day} again"
        )
