"""The stitcher (FORMAT §8): give every square of a packing a library tile (hash, t) with no seam conflict.

``stitch(packing, lib, stream)`` runs:

1. **Geometry** (``order.py``): adjacency, BFS distance from the seed tile,
   the sides each square will have known at its turn, the placement order
   (seed first; big-first: large squares first; grown: id order; else BFS).
2. **Placement**, square by square: the constraint it faces on the board
   (``Board.constraint``) is looked up in all 16 orientations
   (``index.MemoryIndex``; m = 1 only for the seed tile). Candidates are drawn
   from ``stream.child("place")`` (``place.choose``): those pinned by the
   known sides first, and the first that passes the forward check
   (``check.ForwardCheck``: every side of every unplaced neighbour can still
   become a valid line; n = 6 neighbours must keep a completion, exactly) is
   taken. If none passes and the drain is on, a window-aware tile is made
   (``joint.joint_complete``); if none exists either, the board around the
   square is already doomed, and the square is repaired at once (step 4,
   ``repaired_early``) rather than given a tile that leaves a neighbour
   uncompletable; only if that fails is the first candidate placed
   (``unchecked``). With a difficulty ``profile``
   (``tilelib.difficulty``) the square first draws a ladder level and the
   candidates are those of that level, then of the allowed levels, then all;
   its drained tiles are thinned to that level (``profiled_choose``,
   ``level_for``).
3. **Miss**: no candidate → a row in ``misses`` (``ledger.record_miss``,
   packing id = the packing's digest; repeats count). With the drain on
   (default, ``drain=True`` = ``"inline"``) the miss is drained at once,
   against exactly the constraint recorded: if it contains a known nofit
   set it is nofit without solving (``drain.NofitSet``); else a window-aware
   completion (``joint``) or a plain CP-SAT completion (``drain.generate``,
   whose infeasibility proof marks the miss nofit) is thinned with
   seam_mask = the square's known sides (seed: seam_mask 0, m_max 1),
   appended to the library and the index, placed, and the miss marked
   drained. ``drain="deferred"`` instead finishes the first pass and then
   retries the missed squares against what they face by then (measured:
   more nofits, since later neighbours add constraints).
4. **Repair** (drain on, ``repair.py``): before giving a square up, placed
   neighbours are taken off and the square is remade with them — first
   putting them back by lookup, then completing all of them together in one
   model. Else everything is undone.
5. **Fallback**: a square still unfilled is split (``fallback.split_square``)
   into smaller squares and zone rectangles; the new squares go through
   steps 2–5 at once (so failures end, at worst, as zones). With
   ``drain=False`` only lookups run.

All ledger writes of one stitch share one transaction (committed at the end).

**Halves** (``regions.py``, boards of side >= ``regions.MIN_G`` with the drain on): the seed and
the strip of squares crossing a middle column are placed first, then the two halves left and
right of it — which share no cell — are stitched by steps 2–4 in forked workers that log their
library writes (``journal.py``), then their results are taken left then right, and the squares a
half would have split get steps 2–5 last. The board does not depend on ``workers``.

State and options: ``StitchRun`` holds the run's state (``repair.py`` works on it), configured by a
keyword-only ``StitchOptions`` whose ``drain`` is a ``Drain``.

Ids of the returned packing: squares keep their relative order; a split
square is replaced, in place, by its sub-squares in (y, x) order (recursively),
so ids after a split shift. ``seed_tile`` is renumbered accordingly (the seed
is never split or moved by a repair: with the drain on it always gets a tile;
without it and with no m = 1 tile of its size, ``StitchError``). New zones
(the fallbacks' zone rectangles grouped by contact) follow the packing's zones.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

from generator.version import default_m_max
from packers.packing import Packing, adjacency
from stitcher.board import Board
from stitcher.check import ForwardCheck
from stitcher.drain import MAX_TRIES, NOFIT, NofitSet, generate, tile_from_grid
from stitcher.joint import JOINT_TRIES, joint_complete
from stitcher.fallback import assemble, replace_square
from stitcher.fresh import FreshRule, exclude_images
from stitcher.index import MemoryIndex
from stitcher.journal import SqlJournal
from stitcher.options import Drain, StitchOptions
from stitcher import regions
from stitcher.profile import level_indexes
from stitcher.order import bfs_distance, known_sides, placement_order, unit_owner
from stitcher.repair import repair
from stitcher.reuse import existing
from stitcher.small import EXACT_N, doomed, feasible
from stitcher.stats import StitchStats
from tilelib.errors import TilesError
from tilelib.rng import Stream

BEST_OF = 1
STITCH_CACHE_KIB = 256 * 1024    # SQLite page cache of the library connection during a stitch
JOINT_MISS = "joint-miss"


class StitchError(TilesError):
    """The packing cannot be stitched as asked (e.g. no m = 1 tile for the seed and no drain)."""


@dataclass
class StitchResult:
    placements: list            # (hash, t) per square of ``packing``
    packing: Packing            # the input packing, or a valid one with split squares and new zones
    stats: StitchStats


class _Deferred:
    """The library connection as ``tilelib.ledger`` sees it during a stitch: ``with conn:`` does not
    commit, so all ledger writes of a stitch share one transaction, committed at the end (measured:
    one commit per miss cost ~16 ms of fsync, 11 s for 666 misses at G=301)."""

    def __init__(self, conn) -> None:
        self.conn = conn

    def execute(self, *a):
        return self.conn.execute(*a)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


class StitchRun:
    """The state of one stitch: geometry (read-only after set-up), the board and placements (what
    the squares hold so far), the streams of the current pass, the index, the journal of library
    writes, and the counters. ``repair.py`` and ``regions.py`` work on it; see the module doc."""

    # geometry: squares grow (fallback sub-squares are appended), the rest is fixed after set-up
    squares: list[tuple[int, int, int]]       # (x, y, s) in pitch space; n = s + 1
    adj: list[list[int]]                      # squares sharing a cell
    known: list[int]                          # side mask each square's tile is thinned against
    order: list[int]                          # placement order (seed first)
    seed: int
    fixed: frozenset[int]                     # squares a repair never takes off (seed; a half's strip)
    halves: "regions.Split | None"            # the two halves and the strip, or None: one pass
    # what the squares hold
    board: Board
    placements: list                          # (hash, t) or None per square
    edges_of: dict[int, tuple]                # oriented edges of each placed square
    order_of: dict[int, int]                  # when each square was (last) placed
    children: dict[int, list[int]]            # a split square -> its sub-squares
    # where tiles and library writes come from and go
    index: MemoryIndex
    journal: "SqlJournal"                     # a half's worker swaps in a journal.LogJournal
    nofits: NofitSet
    st: StitchStats

    def __init__(self, packing: Packing, lib, stream: Stream, opts: StitchOptions = StitchOptions(), *,
                 index=None, progress: Callable[[int, int, StitchStats], None] | None = None) -> None:
        self.opts = opts
        self.inline = opts.drain is Drain.INLINE
        self.drain = opts.drain is not Drain.OFF
        self.lookahead, self.m_max, self.max_tries = opts.lookahead, opts.m_max, opts.max_tries
        self.lib = lib
        self.conn = _Deferred(lib.conn)
        # The stitch's rows and ledger writes are one transaction; with SQLite's default 2 MB page
        # cache its dirty pages spill to the file mid-transaction and are written again when
        # re-dirtied (measured: 583 MB written at a 363 MB library). Pages it touches stay cached.
        lib.conn.execute(f"PRAGMA cache_size = {-STITCH_CACHE_KIB}")
        self.progress = progress
        self.progress_total = len(packing.squares)   # a half counts its own squares
        self.stream = stream
        self.enter(stream)
        self.defer_splits = False        # a half leaves squares it would split to the strip pass
        self.left_over: list[int] = []
        self.packing = packing
        self.pid = packing.digest()
        self.st = StitchStats()
        t0 = time.perf_counter()
        self.own = unit_owner(packing)
        self.adj = adjacency(packing.squares)
        self.dist = bfs_distance(self.adj, packing.seed_tile)
        self.known = known_sides(packing, self.own, self.dist)
        self.order = placement_order(packing, self.dist, opts.order)
        self.squares = list(packing.squares)
        self.children: dict[int, list[int]] = {}
        self.new_zones: list = []
        self.placements: list = [None] * len(self.squares)
        self.edges_of: dict[int, tuple] = {}
        self.order_of: dict[int, int] = {}
        self.seq = 0
        self.seed = packing.seed_tile
        self.fixed = frozenset({self.seed})   # squares a repair never takes off
        self.halves = (regions.split(self.squares, self.seed, packing.P, self.order)
                       if packing.G >= regions.MIN_G and self.drain else None)
        t1 = time.perf_counter()
        # Every size up to the largest: fallback sub-squares can be any smaller size.
        top = max((s + 1 for (_x, _y, s) in packing.squares), default=6)
        self.index = index if index is not None else MemoryIndex.open(lib.conn, lib.path, range(6, top + 1, 2),
                                                                      fresh=opts.fresh)
        if opts.fresh and not isinstance(self.index, MemoryIndex):
            raise ValueError("a fresh stitch needs a MemoryIndex opened with fresh=True")
        # made tiles are kept back until the end unless lookups read the library (an SqlIndex);
        # a half's worker swaps in a journal.LogJournal
        self.journal = SqlJournal(lib, self.conn, defer=isinstance(self.index, MemoryIndex))
        self.profile = opts.profile
        self.level_of: dict[int, int] = {}
        self.level_idx: dict = {}
        if self.profile is not None:   # one index per level set the profile can ask for (stitcher/profile.py)
            self.level_stream = stream.child("profile")
            ns = range(6, top + 1, 2)
            profile = self.profile
            sets = {frozenset({lv}) for n in ns for lv in profile.allowed(n)} | {profile.allowed(n) for n in ns}
            self.level_idx = level_indexes(lib.conn, self.index, ns, sets)
        # the fair rule's state: which held solutions are on the board (None: an ``any`` stitch)
        self.fresh = FreshRule(self.index) if opts.fresh else None
        for idx in self.level_idx.values() if self.fresh is not None else ():
            self.fresh.add_index(idx)
        t2 = time.perf_counter()
        self.st.seconds = {"geometry": t1 - t0, "index": t2 - t1, "drain": 0.0, "ledger": 0.0, "index_add": 0.0}
        info = getattr(self.index, "info", None)
        if info is not None:
            self.st.index = {"source": info.source, "new_rows": info.new_rows, "written": info.written,
                             "active": {n: si.size // 16 for n, si in sorted(self.index.sizes.items())}}
        self.nofits = NofitSet(self.conn)
        self.board = Board(packing.G)
        self.fcheck = ForwardCheck(self.board, self.squares, self.adj, self.placements, self.children)
        self.drains = 0
        self._depth = 0
        self.done = 0

    def enter(self, stream: Stream) -> None:
        """Draw the next pass's placements, drains and splits from ``stream``'s children."""
        self.place_stream = stream.child("place")
        self.drain_stream = stream.child("drain")
        self.split_stream = stream.child("fallback")

    # ------------------------------------------------------------ one square

    def try_place(self, i: int):
        """Look up and place square i; return (placed?, constraint faced)."""
        x, y, s = self.squares[i]
        n = s + 1
        c = self.board.constraint(x, y, n)
        got, index = (None, self.index) if self.profile is None else self.profiled_choose(i, n, c)
        if got is None:
            got, index = self.index.choose(c, i == self.seed, self.known[i], self.place_stream,
                                           check=self._checker(i, n) if self.lookahead else None,
                                           best_of=BEST_OF), self.index
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
                if self.opts.early_repair and self._depth == 0 and repair(self, i):
                    # No tile for this square keeps its open neighbours completable: the board
                    # around it is already doomed. Repair it now rather than place a tile that
                    # dooms its neighbours (each of which would need a repair of its own later).
                    # Only outside a drain section: a repair's own placements never start another.
                    self.st.bump(n, "repaired_early")
                    return True, c
            self.st.bump(n, "unchecked")
        h, t, edges = index.decode(n, got[0])
        self.put(i, h, t, edges)
        if got[1]:
            self.st.bump(n, "preferred")
        return True, c

    def level_for(self, i: int) -> int:
        """The ladder level square i aims for (drawn once from the profile); 0 without a profile."""
        if self.profile is None:
            return 0
        if i not in self.level_of:
            n = self.squares[i][2] + 1
            self.level_of[i] = self.profile.draw(n, self.level_stream.child(str(i)))
        return self.level_of[i]

    def level_order(self, i: int, n: int) -> list:
        """The level indexes square i draws from, in order: its own level's, then the allowed levels'."""
        return [self.level_idx[frozenset({self.level_for(i)})], self.level_idx[self.profile.allowed(n)]]

    def profiled_choose(self, i: int, n: int, c):
        """(choice, index) from the tiles of square i's level, else of any level the profile allows;
        (None, None) when neither has a candidate passing the forward check (the caller then
        chooses among all tiles, as without a profile)."""
        for idx in self.level_order(i, n):
            got = idx.choose(c, i == self.seed, self.known[i], self.place_stream,
                             check=self._checker(i, n, idx) if self.lookahead else None, best_of=BEST_OF)
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
            return self.fcheck.checker(i, table)
        score = None

        def check(key) -> int:
            nonlocal score
            if score is None:
                score = self.fcheck.checker(i)
            return score(index.decode(n, key)[2])

        return check

    def harmless(self, i: int, edges) -> bool:
        """Forward check (``check.ForwardCheck``): with these edges on square i, every side of every
        unplaced neighbour can still be completed to a valid line."""
        return self.fcheck.ok(i, edges)

    def make_joint(self, i: int):
        """A tile for square i from ``joint.joint_complete`` (its unplaced neighbours stay completable)."""
        others = [self.squares[j] for j in self.adj[i] if self.placements[j] is None and j not in self.children]
        if doomed(self.board, [self.squares[i]], others):
            return JOINT_MISS, None      # the model would be infeasible (small.py): no CP-SAT call
        tries, a, exclude = 0, 0, []
        while tries < JOINT_TRIES:
            self.st.cp_calls += 1
            sub = self.drain_stream.child(f"{self.drains}/joint/{a}")
            a += 1
            grid = joint_complete(self.board.values, self.board.known, self.squares[i], others, sub,
                                  exclude=exclude)
            if grid is None:
                break
            if self.banned(grid):           # the fair rule: ask for another grid (not a try)
                self.st.bump(self.squares[i][2] + 1, "banned")
                if not exclude_images(exclude, [grid]):
                    break
                continue
            tries += 1
            tile = tile_from_grid(grid, *self.tile_params(i), sub.child("thin"), level=self.level_for(i))
            if tile is not None:
                self.st.bump(self.squares[i][2] + 1, "joint")
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
                kind = NOFIT             # what CP-SAT would prove, from the table of all grids
            elif self.lookahead:
                kind, tile = self.make_joint(i)
            if kind not in ("tile", NOFIT):
                self.st.cp_calls += 1
                kind, tile = generate(c, *self.tile_params(i),
                                      self.drain_stream.child(str(self.drains)), self.max_tries,
                                      accept=(lambda e: self.harmless(i, e)) if self.lookahead else None,
                                      level=self.level_for(i),
                                      banned=self.banned if self.fresh is not None else None)
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
        self.put(i, h, t, tile.edges)

    def put(self, i: int, h: str, t: int, edges, *, renumber: bool = True) -> None:
        """The one way a tile goes on a square: the board's cells, the square's placement and edges,
        when it was placed (``renumber``: now; a repair putting a square back keeps its old turn),
        the count, and the fair rule's marks."""
        x, y, s = self.squares[i]
        self.board.place(x, y, s + 1, edges)
        self.placements[i], self.edges_of[i] = (h, t), edges
        if renumber:
            self.order_of[i] = self.seq = self.seq + 1
        self.st.placements += 1
        if self.fresh is not None:
            self.fresh.put(h)

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
        return existing(indexes, tile, known=seam, m_max=default_m_max(n) if m_max is None else m_max,
                        m1=i == self.seed, fetch=self.journal.get_oriented)

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
            self.index.add_rows(n, [r for _lv, r in rows])
            for levels, idx in self.level_idx.items():
                idx.add_rows(n, [r for lv, r in rows if lv in levels])
        if self.fresh is not None:
            for h, tile in made:
                self.fresh.learn(h, tile)
        self.st.seconds["index_add"] += time.perf_counter() - t0

    def resolve(self, i: int, prev) -> None:
        """Retry a missed square (prev = its first-pass (miss, constraint) or None), drain, or split."""
        n = self.squares[i][2] + 1
        ok, c = self.try_place(i)
        if ok:
            self.st.bump(n, "hits_retry")
            if prev is not None:
                self.journal.mark_drained(prev[0].id, self.placements[i][0])
            return
        if self.drain:
            cur = prev[0] if prev is not None and prev[1] == c else self.record(c)
            with self.draining():   # settling by containment is drain work (no placement)
                settled = cur.nofit or self.nofits.settled(c)
            if settled:
                if not cur.nofit:
                    self.journal.mark_nofit(cur.id)
                self.st.bump(n, "settled")
            else:
                kind = self.make(i, c)
                if kind == "tile":
                    self.st.bump(n, "drained")
                    h = self.placements[i][0]
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
        if self.drain and self.lookahead and repair(self, i):
            return
        self.split(i)

    def unplace(self, i: int) -> None:
        """The one way a tile comes off a square (``put``'s inverse)."""
        x, y, s = self.squares[i]
        self.board.remove(x, y, s + 1)
        h = self.placements[i][0]
        self.placements[i] = None
        self.st.placements -= 1
        if self.fresh is not None:
            self.fresh.take(h)

    def tile_params(self, j: int) -> tuple[int, int | None]:
        """(seam_mask, m_max) a new tile for square j is thinned with (the seed: 0 and 1)."""
        return (0, 1) if j == self.seed else (self.known[j], self.m_max)

    def split(self, i: int) -> None:
        """Fallback: replace square i by smaller squares and zones, and place those at once."""
        if i == self.seed:
            raise StitchError("the seed tile got no m = 1 tile (none in the library fits"
                              + (" and the drain made none)" if self.drain else " and the drain is off)"))
        if self.defer_splits:
            self.left_over.append(i)
            return
        for j in replace_square(self, i):
            self.resolve(j, None)

    # ------------------------------------------------------------ the whole board

    def run(self) -> StitchResult:
        t0 = time.perf_counter()
        st = self.st
        area = {}
        for i in self.order:
            s = self.squares[i][2]
            st.bump(s + 1, "squares")
            area[i] = s * s
        st.square_area = sum(area.values())
        if self.halves is None:
            first_area = self.place_all(self.order, area)
        else:
            first_area = regions.strip_then_halves(self, area)
        st.first_fill = first_area / st.square_area if st.square_area else 1.0
        t1 = time.perf_counter()
        packing, placements = assemble(self)
        t2 = time.perf_counter()
        st.seconds["assemble"] = t2 - t1
        st.dropped = self.journal.flush({h for h, _t in placements})
        self.lib.conn.commit()
        st.seconds["ledger"] += time.perf_counter() - t2
        st.final_fill = sum(s * s for (_x, _y, s) in packing.squares) / st.square_area if st.square_area else 1.0
        st.zone_fraction_before = self.packing.zone_fraction()
        st.zone_fraction_after = packing.zone_fraction()
        st.seconds["total"] = time.perf_counter() - t0 + st.seconds["geometry"] + st.seconds["index"]
        return StitchResult(placements, packing, st)

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
            n = self.squares[i][2] + 1
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


def stitch(packing: Packing, lib, stream: Stream, *, drain: Drain | bool = Drain.INLINE,
           m_max: int | None = None, progress: Callable[[int, int, StitchStats], None] | None = None,
           index=None, max_tries: int = MAX_TRIES, order: str = "packer", lookahead: bool = True,
           profile=None, workers: int = 1, reuse: bool = True, early_repair: bool = True,
           fresh: bool = False) -> StitchResult:
    """Assign every square a library tile (see the module doc and ``StitchOptions``). ``index``
    defaults to a fresh ``MemoryIndex`` of the library (pass ``SqlIndex(lib.conn)`` to query SQLite
    per square); a ``MemoryIndex`` passed in learns every tile the stitch makes, including those it
    does not keep (``journal.SqlJournal.flush``), so open a fresh one for the next stitch.
    ``workers``: processes for the halves of a big board (the board is the same)."""
    opts = StitchOptions(drain=drain, m_max=m_max, max_tries=max_tries, order=order, lookahead=lookahead,
                         profile=profile, workers=workers, reuse=reuse, early_repair=early_repair, fresh=fresh)
    run = None
    try:
        run = StitchRun(packing, lib, stream, opts, index=index, progress=progress)
        return run.run()
    finally:
        if run is not None:
            run.journal.flush(set())    # after a failure: the tiles the ledger names (else nothing left)
        lib.conn.commit()
