"""How much of a board could be looked up: fresh and reused tiles per n, and the repeated share.

The daily build reports it on the stitch stage line and in ``--json`` (``stitch.fairness``), for
``fresh`` and ``any`` boards alike (DECISIONS, "The fair rule"):

- a tile of side n >= 10 is **reused** when its solution (up to the 16 symmetries) is on the board
  at a lower tile id, or was spent by a board before this build (``tilelib.spent``): a fresh
  board has none;
- a tile of side 6 or 8 (exempt from the rule, not recorded as spent) is **reused** when the same
  row is on the board at a lower tile id or was in the library before this build — "by row", a
  lower bound on repeats by solution;
- a fresh tile was **drawn** from the stock when its row was in the library before this build (a
  first-pass hit), else **made** tonight (drained for its square); ``tilelib.stock`` records the
  drawn and made counts of each night (n >= 10) to say how fast the stock goes;
- the **repeated share** of a class (n >= 10, n = 6/8, all) is the reward (n² per tile) on its
  reused tiles over the reward of all its tiles.
"""

from __future__ import annotations

from tilelib.db import rows_by_hash
from tilelib.spent import held, solution_hash, spent_of


def _rows(conn, hashes: list[str]) -> dict[str, tuple[int, int, bytes]]:
    """hash -> (rowid, n, canonical solution BLOB) of the library rows."""
    return {
        h: (rowid, n, bytes(sol)) for h, rowid, n, sol in rows_by_hash(conn, ("hash", "rowid", "n", "solution"), hashes)
    }


def report(conn, hashes: list[str], ns: list[int], start_rowid: int) -> dict:
    """The board's fairness figures (module doc). ``hashes`` and ``ns``: the placed tiles in id
    order; ``start_rowid``: the largest tiles rowid before the build (rows above it are tonight's).
    Call it before the board's own spent rows are recorded."""
    rows = _rows(conn, hashes)
    sols = [solution_hash(n, rows[h][2]) if held(n) else None for h, n in zip(hashes, ns, strict=True)]
    before = spent_of(conn, [s for s in sols if s is not None])
    per_n: dict[int, dict[str, int]] = {}
    reward = {"held": [0, 0], "small": [0, 0]}  # [reused, all]
    seen: set = set()
    for h, n, sol in zip(hashes, ns, sols, strict=True):
        key = sol if sol is not None else h
        reused = key in seen or (sol in before if sol is not None else rows[h][0] <= start_rowid)
        seen.add(key)
        d = per_n.setdefault(n, {"tiles": 0, "fresh": 0, "reused": 0, "drawn": 0, "made": 0})
        d["tiles"] += 1
        d["reused" if reused else "fresh"] += 1
        if not reused:
            d["drawn" if rows[h][0] <= start_rowid else "made"] += 1
        r = reward["held" if held(n) else "small"]
        r[0] += n * n if reused else 0
        r[1] += n * n
    total = [reward["held"][0] + reward["small"][0], reward["held"][1] + reward["small"][1]]
    share = {
        k: round(a / b, 6) if b else 0.0
        for k, (a, b) in (("held", reward["held"]), ("small", reward["small"]), ("all", total))
    }
    return {"per_n": {str(n): per_n[n] for n in sorted(per_n)}, "repeated_share": share}


def line(fair: dict) -> str:
    """The stitch stage line's summary of ``report``."""
    per = fair["per_n"]
    big = (
        sum(d["reused"] for n, d in per.items() if held(int(n))),
        sum(d["tiles"] for n, d in per.items() if held(int(n))),
    )
    small = (
        sum(d["reused"] for n, d in per.items() if not held(int(n))),
        sum(d["tiles"] for n, d in per.items() if not held(int(n))),
    )
    sh = fair["repeated_share"]
    return (
        f"reused n>=10 {big[0]:,} of {big[1]:,} ({100 * sh['held']:.1f}% of their reward), "
        f"n=6/8 {small[0]:,} of {small[1]:,} ({100 * sh['small']:.1f}%), all {100 * sh['all']:.1f}%"
    )
