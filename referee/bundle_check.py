"""Step ``bundle`` of ``referee.verify``: is a library file that says it is a day's bundle exactly the
rows of that day's board (``referee.bundle`` writes them)? A missing row means the board cannot be
checked from it, an extra one would publish a tile of the stock, another manifest means the bundle
is not of this board.
"""

from __future__ import annotations

from referee.board import CheckFailed
from referee.manifest import Manifest
from tilelib.spent import board_rows, live_boards
from tilelib.store import Library

KIND = "bundle"  # meta kind of a bundle (a delta's is "delta")
DAY_KEY = "bundle_day"  # meta key naming the bundle's day


def bundle_problem(m: Manifest, lib: Library) -> str | None:
    """Why the bundle ``lib`` does not hold exactly the rows of manifest ``m``'s board, or None.
    (For a library that is not a bundle: None, it is checked as a library.)"""
    meta = lib.meta()
    if meta.get("kind") != KIND:
        return None
    q = lib.conn.execute
    day = meta.get(DAY_KEY)
    if day != m.day:
        return f"this is the bundle of {day}, the manifest is of {m.day}"
    days = [d for (d,) in q("SELECT day FROM manifests ORDER BY day")]
    if days != [m.day]:
        return f"a bundle holds its day's manifest only; this one holds manifests of {', '.join(days) or 'no day'}"
    if live_boards(lib.conn, [m.day]).get(m.day) != m.digest():
        return f"the bundle's manifest of {m.day} is not this manifest (digest {m.digest()[:12]}…)"
    have = {h for (h,) in q("SELECT hash FROM tiles")}
    for i, h in enumerate(m.hashes):
        if h not in have:
            return f"tile {i}'s row {h[:12]}… is not in the bundle"
    extra = sorted(have - set(m.hashes))
    if extra:
        return (
            f"the bundle holds {len(extra)} tile row(s) the manifest does not place (first "
            f"{extra[0][:12]}…): a bundle carries only its day's tiles"
        )
    misses = q("SELECT count(*) FROM misses").fetchone()[0]
    if misses:
        return f"the bundle holds {misses} misses row(s): a bundle carries only its day's rows"
    want = {
        (r.solution, r.board, r.n, r.day)  # from the bundle's own tiles, all present
        for r in board_rows(lib.conn, m.hashes, m.digest(), m.day)
    }
    got = set(q("SELECT solution, board, n, day FROM spent"))
    if got - want:
        first = min(got - want)
        return (
            f"the bundle holds {len(got - want)} spent row(s) that are not this board's (first solution "
            f"{str(first[0])[:12]}… of {first[3]})"
        )
    if want - got:
        first = min(want - got)
        return f"the bundle lacks {len(want - got)} of the board's spent rows (first solution {first[0][:12]}…)"
    return None


def check_bundle(m: Manifest, lib: Library) -> bool:
    """Step ``bundle`` of ``referee.verify``: CheckFailed when a bundle is not exactly ``m``'s rows.
    Returns whether ``lib`` is a bundle (False: a library, checked as one)."""
    why = bundle_problem(m, lib)
    if why is not None:
        raise CheckFailed("bundle", why)
    return lib.meta().get("kind") == KIND


__all__ = ["DAY_KEY", "KIND", "bundle_problem", "check_bundle"]
