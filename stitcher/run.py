"""One stitch's passes (``stitcher.stitch`` has the whole algorithm): ``StitchRun``.

``try_place`` looks a square up (under a profile, its level's index first) with the forward
check, or makes a window-aware tile when no candidate passes; ``resolve`` retries a missed square,
drains it (``make``), settles it as nofit, repairs it (the ``repair`` it was given:
``stitcher.repair.repair``) or splits it (``fallback.replace_square``); ``place_all`` is one
pass over a list of squares. What the squares hold is changed only through ``self.at``
(``placements.Placements``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import TYPE_CHECKING

from generator.version import default_m_max
from packers.packing import Packing
from stitcher import regions
from stitcher.check import _CForwardCheck
from stitcher.drain import NOFIT, NofitSet, generate, tile_from_grid
from stitcher.fallback import replace_square
from stitcher.fresh import FreshRule, exclude_images
from stitcher.index import MemoryIndex
from stitcher.joint import JOINT_TRIES, joint_complete
from stitcher.journal import SqlJournal
from stitcher.options import Drain, StitchOptions
from stitcher.order import placement_order
from stitcher.placements import Placements
from stitcher.profile import level_indexes
from stitcher.reuse import existing
from stitcher.small import EXACT_N, doomed, feasible
from stitcher.stats import StitchStats
from tilelib.errors import TilesError
from tilelib.rng import Stream

if TYPE_CHECKING:
    import numpy as np

BEST_OF = 1
STITCH_CACHE_KIB = 32 * 1024  # SQLite page cache of the library connection during a stitch
JOINT_MISS = "joint-miss"


class StitchError(TilesError):
    """The packing cannot be stitched as asked (e.g. no m = 1 tile for the seed and no drain)."""


Repair = Callable[["StitchRun", int], bool]  # stitcher.repair.repair: remake a square with its neighbours


def open_indexes(lib, packing: Packing, opts: StitchOptions, index=None) -> tuple:
    """(index, level indexes, fair rule) a stitch draws candidates from: ``index`` or a
    ``MemoryIndex`` of the library for every size up to the packing's largest (a fallback
    sub-square can be any smaller size); under a profile one view of it per level set it can ask for
    (``stitcher.profile``); under the fair rule the ``FreshRule`` over all of them, else None."""
    top = max((s + 1 for (_x, _y, s) in packing.squares), default=6)
    ns = range(6, top + 1, 2)
    if index is None:
        index = MemoryIndex.open(lib.conn, lib.path, ns, fresh=opts.fresh)
    if opts.fresh and not isinstance(index, MemoryIndex):
        raise ValueError("a fresh stitch needs a MemoryIndex opened with fresh=True")
    levels: dict = {}
    if opts.profile is not None:
        profile = opts.profile
        sets = {frozenset({lv}) for n in ns for lv in profile.allowed(n)} | {profile.allowed(n) for n in ns}
        levels = level_indexes(lib.conn, index, ns, sets)
    fresh = FreshRule(index) if opts.fresh else None  # a level view shares the index's dead marks
    return index, levels, fresh


def index_info(index) -> dict:
    """What the stats say of a MemoryIndex: where it came from and its active tiles per n ({} for
    another index)."""
    info = getattr(index, "info", None)
    if info is None:
        return {}
    return {
        "source": info.source,
        "new_rows": info.new_rows,
        "written": info.written,
        "active": {n: si.size for n, si in sorted(index.sizes.items())},
    }


class StitchRun:
    """One stitch's passes over its squares: look up, drain, repair (through ``repair``), split.

    What the squares are and hold is ``at`` (``placements.Placements``, the one owner of it);
    the run owns where tiles come from (the index, the level indexes, the fair rule), where library
    writes go (the journal, the nofit set, the stats — a half's worker swaps them, ``as_half``),
    the streams of the current pass (``enter``) and the squares a repair may not move (``pin``).
    ``stitcher.stitch`` makes one (``open_run``) and drives it; see its module doc."""

    at: Placements
    order: list[int]  # placement order (seed first)
    seed: int
    fixed: frozenset[int]  # squares a repair never takes off (seed; a half's strip)
    halves: regions.Split | None  # the two halves and the strip, or None: one pass
    index: MemoryIndex
    journal: SqlJournal  # a half's worker has a journal.LogJournal
    nofits: NofitSet
    st: StitchStats

    def __init__(
        self,
        packing: Packing,
        lib,
        stream: Stream,
        opts: StitchOptions = StitchOptions(),
        *,
        repair: Repair,
        index=None,
        progress: Callable[[int, int, StitchStats], None] | None = None,
    ) -> None:
        self.opts, self.profile, self.repairer = opts, opts.profile, repair
        self.inline = opts.drain is Drain.INLINE
        self.drain = opts.drain is not Drain.OFF
        self.lookahead, self.m_max, self.max_tries = opts.lookahead, opts.m_max, opts.max_tries
        self.lib, self.packing, self.pid = lib, packing, packing.digest()
        self.conn = lib.conn  # written only inside the stitch's transaction (stitch.kept)
        # The stitch's rows and ledger writes are one transaction; with SQLite's default 2 MB page
        # cache its dirty pages spill to the file mid-transaction and are written again when
        # re-dirtied. 32 MB holds them: at G = 1000 on the 1M library the library file takes 62 MB
        # of writes at 2 MB, 40 at 32 MB, 40 at 256 MB, which held 200 MB more (docs/benchmarks/43).
        lib.conn.execute(f"PRAGMA cache_size = {-STITCH_CACHE_KIB}")
        self.progress, self.progress_total, self.done = progress, len(packing.squares), 0
        self.stream = stream
        self.enter(stream)
        self.defer_splits = False
        self.left_over: list[int] = []  # a half leaves squares it would split to the last pass
        self.st = StitchStats()
        t0 = time.perf_counter()
        self.index, self.level_idx, self.fresh = open_indexes(lib, packing, opts, index)
        self.level_stream = stream.child("profile")
        self.level_of: dict[int, int] = {}  # square -> the ladder level it aims for (``level_for``)
        t1 = time.perf_counter()
        self.at = Placements(packing, self.fresh)
        self.seed = packing.seed_tile
        self.order = placement_order(packing, self.at.dist, opts.order)
        self.fixed = frozenset({self.seed})
        self.halves = (
            regions.split(self.at.squares, self.seed, packing.P, self.order)
            if packing.G >= regions.MIN_G and self.drain
            else None
        )
        self.st.seconds = {
            "geometry": time.perf_counter() - t1,
            "index": t1 - t0,
            "drain": 0.0,
            "ledger": 0.0,
            "index_add": 0.0,
        }
        self.st.index = index_info(self.index)
        # made tiles are kept back until the end unless lookups read the library (an SqlIndex)
        self.journal = SqlJournal(lib, self.conn, defer=isinstance(self.index, MemoryIndex))
        self.nofits = NofitSet(self.conn)
        self.drains = 0
        self._depth = 0

    def enter(self, stream: Stream) -> None:
        """Draw the next pass's placements, drains and splits from ``stream``'s children."""
        self.place_stream = stream.child("place")
        self.drain_stream = stream.child("drain")
        self.split_stream = stream.child("fallback")

    def pin(self, ids) -> None:
        """The squares no repair may take off from now on: the seed and ``ids`` that hold a tile."""
        self.fixed = frozenset([self.seed] + [k for k in ids if self.at.placed(k)])

    def count_from(self, done: int, total: int) -> None:
        """Where the progress lines of the next pass start counting (a half counts its own squares)."""
        self.done, self.progress_total = done, total

    def as_half(self, journal) -> None:
        """In a half's forked worker: log library writes to ``journal`` (a ``journal.LogJournal``)
        instead of writing them, count into fresh stats, leave a square it would split to the
        parent's last pass (``left_over``). The parent's connection is not the worker's to use."""
        self.journal, self.nofits, self.defer_splits = journal, NofitSet(journal.conn), True
        self.conn = None
        self.st = StitchStats(seconds={"drain": 0.0, "ledger": 0.0, "index_add": 0.0})

    def reread_nofits(self) -> None:
        """The nofit set as the ledger holds it now (after the halves' nofits were replayed into it)."""
        self.nofits = NofitSet(self.conn)

    # ------------------------------------------------------------ one square

    def try_place(self, i: int):
        """Look up and place square i; return (placed?, constraint faced)."""
        x, y, s = self.at.squares[i]
        n = s + 1
        c = self.at.board.constraint(x, y, n)
        got, index = (None, self.index) if self.profile is None else self.profiled_choose(i, n, c)
        if got is None:
            got, index = (
                self.index.choose(
                    c,
                    i == self.seed,
                    self.at.known[i],
                    self.place_stream,
                    check=self._checker(i, n) if self.lookahead else None,
                    best_of=BEST_OF,
                ),
                self.index,
            )
        if got is None:
            return False, c
        if not got[2]:
            if self.drain and self.lookahead:
                # Every checked candidate would leave a neighbour uncompletable: make one that does not.
                with self.draining():
                    kind, tile = self.make_joint(i)
                    self.drains += 1
                    if kind == "tile":
                        self.install(i, tile)
                if kind == "tile":
                    return True, c
                if self.opts.early_repair and self._depth == 0 and self.repairer(self, i):
                    # No tile for this square keeps its open neighbours completable: the board
                    # around it is already doomed. Repair it now rather than place a tile that
                    # dooms its neighbours (each of which would need a repair of its own later).
                    # Only outside a drain section: a repair's own placements never start another.
                    self.st.bump(n, "repaired_early")
                    return True, c
            self.st.bump(n, "unchecked")
        h, t, edges = index.decode(n, got[0])
        self.at.put(i, h, t, edges)
        if got[1]:
            self.st.bump(n, "preferred")
        return True, c

    def level_for(self, i: int) -> int:
        """The ladder level square i aims for (drawn once from the profile); 0 without a profile."""
        if self.profile is None:
            return 0
        if i not in self.level_of:
            self.level_of[i] = self.profile.draw(self.at.n(i), self.level_stream.child(str(i)))
        return self.level_of[i]

    def level_order(self, i: int, n: int) -> list:
        """The level indexes square i draws from, in order: its own level's, then the allowed levels'."""
        assert self.profile is not None  # level indexes are drawn from only under a profile
        return [self.level_idx[frozenset({self.level_for(i)})], self.level_idx[self.profile.allowed(n)]]

    def profiled_choose(self, i: int, n: int, c):
        """(choice, index) from the tiles of square i's level, else of any level the profile allows;
        (None, None) when neither has a candidate passing the forward check (the caller then
        chooses among all tiles, as without a profile)."""
        for idx in self.level_order(i, n):
            got = idx.choose(
                c,
                i == self.seed,
                self.at.known[i],
                self.place_stream,
                check=self._checker(i, n, idx) if self.lookahead else None,
                best_of=BEST_OF,
            )
            if got is not None and got[2]:
                self.st.bump(n, "profile_hits")
                return got, idx
        return None, None

    def _checker(self, i: int, n: int, index=None):
        """key -> forward-check score for square i; the per-square setup runs at the first call.
        With a C index table it is a C ``Checker`` (which ``index.choose`` runs in C)."""
        index = self.index if index is None else index
        table = index.table(n)
        if table is not None:
            # a C table exists only when stitcher._core loaded, and then so is the C forward check
            assert isinstance(self.at.fcheck, _CForwardCheck)
            return self.at.fcheck.checker(i, table)
        score = None

        def check(key) -> int:
            nonlocal score
            if score is None:
                score = self.at.fcheck.checker(i)
            return score(index.decode(n, key)[2])

        return check

    def harmless(self, i: int, edges) -> bool:
        """Forward check (``check.ForwardCheck``): with these edges on square i, every side of every
        unplaced neighbour can still be completed to a valid line."""
        return self.at.fcheck.ok(i, edges)

    def make_joint(self, i: int):
        """A tile for square i from ``joint.joint_complete`` (its unplaced neighbours stay completable)."""
        at = self.at
        others = [at.squares[j] for j in at.open_neighbours(i)]
        if doomed(at.board, [at.squares[i]], others):
            return JOINT_MISS, None  # the model would be infeasible (small.py): no CP-SAT call
        tries, a = 0, 0
        exclude: list[np.ndarray] = []  # the banned grids' images (``fresh.exclude_images``)
        while tries < JOINT_TRIES:
            self.st.cp_calls += 1
            sub = self.drain_stream.child(f"{self.drains}/joint/{a}")
            a += 1
            grid = joint_complete(
                at.board.values, at.board.known, at.squares[i], others, sub, exclude=exclude, tally=self.st.bump
            )
            if grid is None:
                break
            if self.banned(grid):  # the fair rule: ask for another grid (not a try)
                self.st.bump(at.n(i), "banned")
                if not exclude_images(exclude, [grid]):
                    break
                continue
            tries += 1
            tile = tile_from_grid(grid, *self.tile_params(i), sub.child("thin"), level=self.level_for(i))
            if tile is not None:
                self.st.bump(at.n(i), "joint")
                return "tile", tile
        return JOINT_MISS, None

    def record(self, c):
        t0 = time.perf_counter()
        miss = self.journal.record_miss(c, self.pid)
        self.st.seconds["ledger"] += time.perf_counter() - t0
        return miss

    def make(self, i: int, c) -> str:
        """Drain square i against constraint c: place a new tile, or say NOFIT/FAILED."""
        with self.draining():
            kind, tile = JOINT_MISS, None
            if c.n in EXACT_N and not feasible(c):
                kind = NOFIT  # what CP-SAT would prove, from the table of all grids
            elif self.lookahead:
                kind, tile = self.make_joint(i)
            if kind not in ("tile", NOFIT):
                self.st.cp_calls += 1
                kind, tile = generate(
                    c,
                    *self.tile_params(i),
                    self.drain_stream.child(str(self.drains)),
                    self.max_tries,
                    accept=(lambda e: self.harmless(i, e)) if self.lookahead else None,
                    level=self.level_for(i),
                    banned=self.banned if self.fresh is not None else None,
                    tally=self.st.bump,
                )
            self.drains += 1
            if kind == "tile":
                self.install(i, tile)
        return kind

    @contextmanager
    def draining(self):
        """Time a drain section once, however deeply drain sections nest (repair -> make)."""
        self._depth += 1
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self.st.seconds["drain"] += time.perf_counter() - t0

    def install(self, i: int, tile) -> None:
        """Place a made tile on square i: a tile the index holds with the same grid if one can stand
        for it (``reusable``), else the new tile, appended to the library and the index."""
        got = self.reusable(i, tile) if self.opts.reuse else None
        if got is not None:
            h, t = got
            self.st.bump(tile.n, "reused")
        else:
            h, t = self.journal.insert(tile)
            self.learn(h, tile)
            self.st.made += 1
        self.at.put(i, h, t, tile.edges)

    def banned(self, grid) -> bool:
        """Whether a made grid may not go on the board under the fair rule (``FreshRule.banned``)."""
        return self.fresh is not None and self.fresh.banned(grid, self.journal.is_spent)

    def reusable(self, i: int, tile):
        """(hash, t) of an indexed tile with the grid of ``tile`` that square i can take instead
        (``stitcher.reuse``): pinned for the sides the new tile was thinned for, m within its
        bound, of the square's level (else an allowed one) under a profile."""
        n = tile.n
        seam, m_max = self.tile_params(i)
        indexes = [self.index] if self.profile is None else self.level_order(i, n)
        return existing(
            indexes,
            tile,
            known=seam,
            m_max=default_m_max(n) if m_max is None else m_max,
            m1=i == self.seed,
            fetch=self.journal.get_oriented,
        )

    def learn(self, h: str, tile) -> None:
        """Add a new tile (hash h) to the index and to the level indexes its ladder level is in."""
        self.learn_all([(h, tile)])

    def learn_all(self, made: list) -> None:
        """``learn`` for many (hash, tile) pairs at once: one index extend per size (a half's tiles)."""
        t0 = time.perf_counter()
        by_n: dict[int, list] = {}
        for h, tile in made:
            canon = tile.canonical()[0]
            f = canon.features
            by_n.setdefault(canon.n, []).append((f.ladder, (h, tuple(canon.edges), f.m, f.alt_sides)))
        for n, rows in by_n.items():
            self.index.add_rows(n, [r for _lv, r in rows], ladder=[lv for lv, _r in rows])
        if self.fresh is not None:
            for h, tile in made:
                self.fresh.learn(h, tile)
        self.st.seconds["index_add"] += time.perf_counter() - t0

    def resolve(self, i: int, prev) -> None:
        """Retry a missed square (prev = its first-pass (miss, constraint) or None), drain, or split."""
        n = self.at.n(i)
        ok, c = self.try_place(i)
        if ok:
            self.st.bump(n, "hits_retry")
            if prev is not None:
                tile = self.at.tile(i)
                assert tile is not None  # try_place put one
                self.journal.mark_drained(prev[0].id, tile[0])
            return
        if self.drain:
            cur = prev[0] if prev is not None and prev[1] == c else self.record(c)
            with self.draining():  # settling by containment is drain work (no placement)
                settled = cur.nofit or self.nofits.settled(c)
            if settled:
                if not cur.nofit:
                    self.journal.mark_nofit(cur.id)
                self.st.bump(n, "settled")
            else:
                kind = self.make(i, c)
                if kind == "tile":
                    self.st.bump(n, "drained")
                    tile = self.at.tile(i)
                    assert tile is not None  # make put the tile it made
                    h = tile[0]
                    self.journal.mark_drained(cur.id, h)
                    if prev is not None and prev[0].id != cur.id:
                        self.journal.mark_drained(prev[0].id, h)
                    return
                if kind == NOFIT:
                    self.journal.mark_nofit(cur.id)
                    self.nofits.add(c)
                    self.st.bump(n, "nofit")
                else:
                    self.st.bump(n, "failed")
        elif prev is None:
            self.record(c)
        if self.drain and self.lookahead and self.repairer(self, i):
            return
        self.split(i)

    def tile_params(self, j: int) -> tuple[int, int | None]:
        """(seam_mask, m_max) a new tile for square j is thinned with (the seed: 0 and 1)."""
        return (0, 1) if j == self.seed else (self.at.known[j], self.m_max)

    def split(self, i: int) -> None:
        """Fallback: replace square i by smaller squares and zones, and place those at once."""
        if i == self.seed:
            raise StitchError(
                "the seed tile got no m = 1 tile (none in the library fits"
                + (" and the drain made none)" if self.drain else " and the drain is off)")
            )
        if self.defer_splits:
            self.left_over.append(i)
            return
        for j in replace_square(self.at, i, self.split_stream, self.st):
            self.resolve(j, None)

    # ------------------------------------------------------------ the whole board

    def place_all(self, order: list[int], area: dict, retry: frozenset = frozenset()) -> int:
        """One pass over ``order``: look up, record misses, drain (inline, or deferred to the end of
        the pass). Squares in ``retry`` had their first turn elsewhere (a half) and are resolved
        again. Returns the area placed at the squares' first turn; times the pass as placement."""
        st = self.st
        drain0, ledger0, t0 = st.seconds["drain"], st.seconds["ledger"], time.perf_counter()
        pending = []
        first_area = 0
        for i in order:
            if i in retry:
                self.resolve(i, None)
                continue
            n = self.at.n(i)
            ok, c = self.try_place(i)
            if ok:
                st.bump(n, "hits_first")
                first_area += area[i]
            else:
                st.bump(n, "misses_first")
                miss = self.record(c)
                if self.drain and (self.inline or i == self.seed):
                    self.resolve(i, (miss, c))
                else:
                    pending.append((i, (miss, c)))
            self.done += 1
            if self.progress:
                self.progress(self.done, self.progress_total, st)
        for i, prev in pending:
            self.resolve(i, prev)
        # placement = the square loop less its drain and ledger work (DECISIONS.md, "placements/s")
        spent = time.perf_counter() - t0 - (st.seconds["drain"] - drain0) - (st.seconds["ledger"] - ledger0)
        st.seconds["place"] = st.seconds.get("place", 0.0) + spent
        return first_area
