"""The stock's top-up (``tiles library generate --stock``): fresh tiles where the stock is thin.

Under the fair rule every night spends the n >= 10 tiles it places (``tilelib.stock``). Its
first-pass hits are drawn from the unspent stock; its misses are drained on the critical path.
The top-up runs after the night's build (the cron example), never before it: a board never
waits on it.

**How much.** Per n >= 10, the stock is restored to what the latest night started with (its
draws replaced: ``started``), and holds at least ``nights`` nights of what the last nights drew
(``drawn_per_night``), and never less than ``floor(n)``. Restoring is what keeps the first-pass
hits up: a night draws more from a larger stock, so a stock held only at K nights of draws would
shrink night after night where a night draws less than 1/K of it (measured at G = 1000, n = 16:
110 of ~640), and each hit it loses is a drain on the critical path. The floor: the stock of
``none`` tiles in which a square with one known side finds a tile with that edge in 9 cases out
of 10 (a tile shows 16 edges over its orientations; of the ``L(n)`` valid lines of side n a
random one is each with odds 1/L: ``ceil(ln 10 · L / 16)`` = 13, 30, 75 and 187 tiles for n =
10..16). The shortfall in distinct unspent solutions is what is made.

**Which edges.** The stitch asks by the sides a square has placed neighbours on; the misses
table shows which (``side_mask`` of each miss, counted, over the misses last seen within
``stock.NIGHTS`` days of the newest, the window of the draw rate). A stock tile answers a square
when its edges match every known side of the square (the odds fall as 16 / L^k with k known
sides: 3e-5 per tile for three sides at n = 10, 7e-9 at n = 16) and the sides it was thinned to
rely on (its seam mask) are among them. So a tile made for fewer sides serves more squares: a
``none`` tile (unique alone) any square its edges fit, a ``corner`` tile any square with those
two sides known, three- and four-sided ones included. A tile made for three or four sides would
serve only squares with those sides known, a subset, at the same odds; the top-up makes none of
them and leaves that share of the mix to tiles of the smaller classes. The shortfall is split over
``none``, ``one``, ``corner`` and ``opposite`` by their share of the misses (all ``none`` when
they have none), each made with its class's seam mask (0, 1, 3, 5: thinned with those sides
assumed known, as the drain thins its tiles), largest remainder first.

**Which levels.** The build aims each square at a ladder level drawn from its difficulty profile
(``tilelib.difficulty``; the default ``human``: levels 2, 3, 4 at 25/50/25%) and looks up tiles of
that level first. A tile thinned to a minimal puzzle is mostly level 5 at n = 16 (it needs
nested guessing), which that profile allows only when nothing else fits. So each class's tiles
are split over the profile's levels by their shares and thinned to their level (Unruly's rule,
``generator.make``), as the drain makes its tiles; no profile (``library``): minimal puzzles.

Deterministic: batch (n, mask, level) draws from ``sha256(seed | "stock/n/mask/level")``, and
``generator.batch`` makes the same tiles for any worker count.
"""

from __future__ import annotations

import hashlib
import math
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tilelib import stock
from tilelib.errors import BadInput

SERVED = {"none": 0, "one": 1, "corner": 3, "opposite": 5}  # class -> the seam mask it is made with
MAX_NIGHTS = 365


def floor(n: int) -> int:
    """Stock of ``none`` tiles of side n in which a one-sided square finds its edge in 9 of 10 cases."""
    from engine.lines import valid_lines

    return math.ceil(math.log(10) * len(valid_lines(n)) / 16)


def misses_mix(conn, nights: int) -> dict[int, dict[str, int]]:
    """Per n >= 10: misses (by their ``count``) per edge class, over those last seen within
    ``nights`` days of the newest miss."""
    newest = conn.execute("SELECT max(last_seen) FROM misses").fetchone()[0]
    out: dict[int, dict[str, int]] = {n: {c: 0 for c in stock.CLASSES} for n in stock.HELD}
    if newest is None:
        return out
    for n, mask, k in conn.execute(
        "SELECT n, side_mask, sum(count) FROM misses WHERE last_seen >= ? AND n >= 10 GROUP BY n, side_mask",
        (newest - nights * 86_400,),
    ):
        if n in out:
            out[n][stock.CLASSES[stock.edge_class(mask)]] += int(k)
    return out


def split(total: int, weights: dict[str, int], default: str = "none") -> dict[str, int]:
    """``total`` over the keys of ``weights`` in proportion, largest remainder first (ties in key
    order); all to ``default`` when every weight is 0."""
    if total <= 0:
        return {}
    w = {k: v for k, v in weights.items() if v > 0}
    if not w:
        return {default: total}
    s = sum(w.values())
    base = {k: total * v // s for k, v in w.items()}
    rest = total - sum(base.values())
    for k in sorted(w, key=lambda k: (-(total * w[k] % s), list(weights).index(k)))[:rest]:
        base[k] += 1
    return {k: v for k, v in base.items() if v}


@dataclass(frozen=True)
class Batch:
    n: int
    cls: str
    count: int
    level: int = 0  # target ladder level (0: thin to a minimal puzzle)

    @property
    def seam_mask(self) -> int:
        return SERVED[self.cls]


@dataclass(frozen=True)
class Plan:
    """What a top-up makes and why: per n the target, the stock it found, the misses mix."""

    nights: int
    targets: dict[int, int]  # n -> distinct unspent solutions wanted
    have: dict[int, int]  # n -> distinct unspent solutions found
    mix: dict[int, dict[str, int]]  # n -> misses per class
    batches: tuple[Batch, ...]

    @property
    def count(self) -> int:
        return sum(b.count for b in self.batches)


def check_nights(nights: int) -> int:
    """``nights`` if it is a valid ``--nights`` (1..365), else BadInput."""
    if not 1 <= nights <= MAX_NIGHTS:
        raise BadInput(f"--nights must be 1..{MAX_NIGHTS}, got {nights}")
    return nights


def level_weights(profile, n: int) -> dict[str, int]:
    """A profile's level shares for side n as integer weights (key: the level)."""
    return {str(lv): round(share * 1_000_000) for lv, share in zip(range(1, 6), profile.of(n), strict=True)}


def plan(rep: dict, mix: dict[int, dict[str, int]], nights: int, profile=None) -> Plan:
    """The top-up for a stock report (``tilelib.stock.report``), a misses mix and a difficulty
    profile (``tilelib.difficulty.Profile`` or None): pure."""
    check_nights(nights)
    targets, have, batches = {}, {}, []
    for n in stock.HELD:
        c = rep["per_n"][str(n)]
        rate = c["drawn_per_night"] or 0.0
        targets[n] = max(floor(n), math.ceil(nights * rate), c.get("started") or 0)
        have[n] = c["solutions"]
        parts = split(targets[n] - have[n], {k: mix.get(n, {}).get(k, 0) for k in SERVED})
        for k, v in parts.items():
            by_level = split(v, level_weights(profile, n), default="0") if profile is not None else {"0": v}
            batches += [Batch(n, k, count, int(lv)) for lv, count in by_level.items()]
    return Plan(nights, targets, have, mix, tuple(batches))


def batch_seed(seed: bytes, b: Batch) -> bytes:
    return hashlib.sha256(seed + f"stock/{b.n}/{b.seam_mask}/{b.level}".encode()).digest()


def _cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


@dataclass
class TopUpReport:
    plan: Plan
    seed: bytes
    made: dict[tuple[int, str], int] = field(default_factory=dict)  # (n, class) -> new rows
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    after: dict | None = None  # the stock report afterwards

    @property
    def inserted(self) -> int:
        return sum(self.made.values())

    def line(self) -> str:
        per = "; ".join(
            f"n={n}: " + ", ".join(f"{k} {v:,}" for (m, k), v in self.made.items() if m == n)
            for n in sorted({n for n, _ in self.made})
        )
        return (
            f"topped up {self.inserted:,} tiles ({per or 'the stock was not thin'}) in {self.seconds:.1f} s, "
            f"CPU {self.cpu_seconds:.1f} s; seed {self.seed.hex()}"
        )


def top_up(
    library: Path,
    p: Plan,
    seed: bytes,
    *,
    workers: int = 1,
    on_tile: Callable[[], None] | None = None,
    on_batch: Callable[[Batch, int, float], None] | None = None,
) -> TopUpReport:
    """Make ``p``'s batches into the library (each batch committed as it goes: an interrupted
    top-up keeps what it made); ``on_batch(batch, new rows, CPU seconds)`` after each."""
    from generator.batch import append_generated
    from generator.make import GenParams, Targets
    from tilelib.store import Library

    rep = TopUpReport(p, seed)
    t0, c0 = time.perf_counter(), _cpu()
    for b in p.batches:
        c1 = _cpu()
        # max_ladder: a tile thinned at level 4 can rate 5 in its canonical orientation (L4's cell
        # order); the stock holds the profile's levels only, so such a tile is made again
        params = GenParams.make(b.n, None, b.seam_mask, Targets(level=b.level, max_ladder=b.level or 5))
        got = append_generated(library, params, b.count, batch_seed(seed, b), workers=workers, on_tile=on_tile)
        rep.made[(b.n, b.cls)] = rep.made.get((b.n, b.cls), 0) + got.inserted
        if on_batch is not None:
            on_batch(b, got.inserted, _cpu() - c1)
    rep.seconds, rep.cpu_seconds = time.perf_counter() - t0, _cpu() - c0
    with Library.open(library) as lib:
        rep.after = stock.report(lib.conn, library)
    return rep


__all__ = [
    "Batch",
    "Plan",
    "SERVED",
    "TopUpReport",
    "batch_seed",
    "check_nights",
    "floor",
    "level_weights",
    "misses_mix",
    "plan",
    "split",
    "top_up",
]
