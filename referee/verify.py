"""``verify(manifest, lib, seed=None)``: FORMAT §10's checks in FORMAT order, stopping at the first failure.

1. ``packing`` — ``packers.validate_packing`` (the one packing validator);
   ``claims`` — the packer exists at the manifest's version and the stated
   stats (tiles, clues, zone share) agree with the board.
   ``bundle`` (only when the library is a day's bundle, ``referee.bundle``) — it holds exactly
   this board's rows: its manifest, its tiles, its spent rows, nothing else.
2. ``tiles`` — in tile id order (each distinct hash checked once): the row
   exists (else ``LibraryOutOfDate``, exit 3: pull) and hashes to its key
   (else ``CorruptLibrary``, exit 3: a damaged library, not a bad board), its n fits the square,
   ``tilelib.audit.tile_problems`` (rules, canonical orientation, no corner
   given, alts/alt_sides/flip/pins/pin_depth/blank consistent), and the
   engine recount: the givens alone admit exactly m solutions and they are
   the solution plus the stored alts. With ``deep=True`` the difficulty
   ladder is re-run too (slow: ~0.1–0.3 s per n=16 tile).
   ``fresh`` (a manifest whose ``reuse`` is ``fresh``) — the fair rule (``tilelib.spent.unfair``):
   no solution of side n >= 10 twice on the board, none that another board the library holds
   already used.
3. ``seams`` — every board cell two tiles hold has one value
   (``referee.board.assemble``).
   ``clues`` — every clue lies in a tile window and is held by fewer than 3
   tiles (FORMAT §6).
4. ``frontier`` — ``referee.frontier.settle``: status frontier / unique /
   ambiguous. An ambiguous board fails; otherwise the computed status must
   equal the manifest's ``status`` (``check_status=False`` skips that
   comparison, for the daily build's first pass before clues exist).
   ``closure`` (a manifest whose ``play`` is ``tile-by-tile``) — ``referee.closure``: a player
   solving one tile at a time from its own view, from the seed tile outward, solves every tile;
   the failure names the first stalled tiles. Older manifests are held to the rule they record.
5. ``seed`` (only with a seed) — sha256(seed) == seed_commit, and
   ``packers.make_packing(name, G, seed, params)`` reproduces the packing,
   version included — or the manifest's packing refines it (the stitcher's
   fallback split squares it could not fill; see ``check_seed``).

Failures raise ``referee.board.CheckFailed`` (a ``VerificationFailed``,
exit code 5) whose ``step`` is the name above and whose message starts with
it. Success returns a ``VerifyReport``.
"""

from __future__ import annotations

import time
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from engine import count_rows
from packers import PACKERS, make_packing, validate_packing
from packers.packing import refinement_problem
from referee import closure
from referee.board import Board, CheckFailed, assemble
from referee.bundle_check import check_bundle
from referee.frontier import Settled, settle
from referee.manifest import TILE_BY_TILE, Manifest
from tilelib import bits
from tilelib.audit import bad_rows, tile_problems
from tilelib.days import seed_commit
from tilelib.errors import CorruptLibrary, LibraryError, TilesError, UnknownTile, VerificationFailed
from tilelib.spent import Reuse, held, solution_hash, unfair
from tilelib.store import Library, tile_row
from tilelib.tile import Tile


@dataclass
class VerifyReport:
    """What a passing verification found, with seconds per step."""

    status: str
    rounds: int
    tiles: int
    distinct_tiles: int
    clues: int
    unknown_after_propagation: int
    method: str
    engine_calls: int
    engine_nodes: int
    seed_checked: bool
    timings: dict = field(default_factory=dict)
    packing_vs_seed: str | None = None  # "reproduced" or "refined" (stitcher splits) when a seed was given
    waves: int | None = None  # the closure's waves (tile-by-tile manifests), else None
    bundle: bool = False  # checked from the day's bundle (step bundle passed)

    def line(self) -> str:
        """The one-line summary the CLI prints, e.g. ``frontier: 1234 tiles, 17 rounds, 0 clues``."""
        extra = "" if self.status == "frontier" else f" ({self.unknown_after_propagation} cells left to {self.method})"
        seed = ""
        if self.seed_checked:
            seed = ", seed ok" + (" (packing refined by stitcher splits)" if self.packing_vs_seed == "refined" else "")
        play = "" if self.waves is None else f", playable tile by tile in {self.waves} waves"
        bundle = ", from its bundle" if self.bundle else ""
        return f"{self.status}: {self.tiles} tiles, {self.rounds} rounds, {self.clues} clues{extra}{play}{seed}{bundle}"


def check_packing(m: Manifest) -> None:
    """Step 1."""
    try:
        validate_packing(m.packing, m.packing.P)
    except VerificationFailed as e:
        raise CheckFailed("packing", str(e).removeprefix("packing: ")) from None


class LibraryOutOfDate(LibraryError):
    """The manifest names a tile this library lacks: pull first (exit 3), it is not proof of fraud.
    It stops step ``tiles`` (FORMAT §10.2), which its message names first, as ``CheckFailed``'s do."""

    step = "tiles"


def _known_packer(m: Manifest, step: str) -> None:
    """The manifest's packer exists here at the manifest's version (else CheckFailed at ``step``)."""
    p = m.packing
    packer = PACKERS.get(p.name)
    if packer is None:
        raise CheckFailed(
            step, f"unknown packer {p.name!r} (known: {', '.join(sorted(PACKERS))}): the packing cannot be re-drawn"
        )
    if packer.version != p.version:
        raise CheckFailed(
            step, f"packer {p.name} is version {packer.version} here; the manifest was packed with version {p.version}"
        )


def check_claims(m: Manifest) -> None:
    """What the manifest claims about itself, checked without library or seed: the packer exists at
    the manifest's version, and the stats it states agree with the board (tiles, clues, zone share)."""
    p = m.packing
    _known_packer(m, "claims")
    st = m.stats
    want = {"tiles": m.tile_count(), "clues": len(m.clues)}
    for key, value in want.items():
        if key in st and st[key] != value:
            raise CheckFailed("claims", f"stats.{key} is {st[key]!r} but the board has {value}")
    if "zone_fraction" in st:
        zf = round(p.zone_fraction(), 6)
        if not isinstance(st["zone_fraction"], (int, float)) or abs(st["zone_fraction"] - zf) > 1e-6:
            raise CheckFailed(
                "claims", f"stats.zone_fraction is {st['zone_fraction']!r} but the packing's zone share is {zf}"
            )


def check_tiles_present(m: Manifest, lib: Library, on_tile=None, inspect=None) -> dict[str, Tile]:
    """In tile id order: every tile row exists (else LibraryOutOfDate), hashes to its key (else
    CorruptLibrary, exit 3: a damaged library, not a fraudulent board) and fits its square;
    ``inspect(i, hash, tile)`` runs once per distinct hash, at its first tile. Returns canonical
    tiles by hash."""
    tiles: dict[str, Tile] = {}
    try:
        got = lib.get_many(m.hashes)  # one read of every row; errors are raised below, in id order
    except CorruptLibrary:
        got = {}
    for i, (x0, y0, s) in enumerate(m.packing.squares):
        h = m.hashes[i]
        tile = tiles.get(h)
        fresh = tile is None
        if tile is None:
            try:
                tile = tiles[h] = got[h] if h in got else lib.get(h)
            except UnknownTile:
                raise LibraryOutOfDate(
                    f"tiles: tile {i}: the library {lib.path} has no tile {h}: "
                    "library out of date, run `tiles library pull`"
                ) from None
            except CorruptLibrary as e:  # HashMismatch included
                err = type(e)(f"tiles: tile {i}: library row {h} is corrupt ({e})")
                err.step = "tiles"  # type: ignore[attr-defined]  # step tiles, exit 3 (FORMAT §10.2)
                raise err from e
        if tile.n != s + 1:
            raise CheckFailed(
                "tiles", f"tile {i}: library tile {h[:12]}… has n={tile.n}, the square at ({x0},{y0}) needs n={s + 1}"
            )
        if fresh and inspect is not None:
            inspect(i, h, tile)
        if on_tile is not None:
            on_tile()
    return tiles


def tile_row_problems(tile: Tile, deep: bool = False) -> list[str]:
    """Everything wrong with one canonical library tile, including the engine recount of m/alts."""
    return tile_problems(tile) or recount_problems(tile, deep)


def recount_problems(tile: Tile, deep: bool = False) -> list[str]:
    """The engine's recount of a tile whose features agree among themselves (``tile_problems`` found
    nothing): its givens admit exactly m solutions, the stored one and its alts; with ``deep``, the
    ladder features re-rated."""
    f, n = tile.features, tile.n
    sol, giv = bits.blob_rows(tile.solution, n), bits.blob_rows(tile.givens, n)
    got, sols, _nodes = count_rows(n, [s & g for s, g in zip(sol, giv, strict=True)], giv, f.m + 1)
    if got > f.m:
        return [f"m is {f.m} but its givens admit more than {f.m} solutions"]
    if got < f.m:
        return [f"m is {f.m} but its givens admit only {got} solution(s)"]
    bl = bits.blob_len(n)
    found = sorted(bits.rows_blob(r, n) for r in sols)
    alts = [bits.rows_blob(bits.blob_rows(f.alts[i : i + bl], n), n) for i in range(0, len(f.alts), bl)]
    if found != sorted([tile.solution, *alts]):
        return ["the stored alts are not exactly the other solutions of its givens"]
    if deep:
        from engine.ladder import rate
        from generator.features import ladder_puzzle

        # The generator rates the canonical orientation (the ladder's L4 scans cells in
        # order, so bifurcation counts depend on orientation); library tiles are canonical.
        want = (f.ladder, f.bifurcations, f.used_unique, f.needs_unique, f.needs_bifurcation)
        lad = rate(ladder_puzzle(tile.solution_grid, tile.givens_grid, tile.seam_mask))
        got_lad = (
            int(lad.ladder),
            int(lad.bifurcations),
            int(bool(lad.used_unique)),
            int(bool(lad.needs_unique)),
            int(bool(lad.needs_bifurcation)),
        )
        if got_lad != want:
            return [
                f"ladder features (ladder, bifurcations, used_unique, needs_unique, needs_bifurcation) "
                f"are {want}; rating the tile gives {got_lad}"
            ]
    return []


def check_tiles(m: Manifest, lib: Library, deep: bool = False, on_tile=None) -> dict[str, Tile]:
    """Step 2, in tile id order: ``check_tiles_present`` (row exists, untampered, fits its square) and,
    once per distinct hash, ``tile_row_problems``. Returns the canonical tiles by hash. ``on_tile()`` is
    called after each tile (progress bars)."""

    def inspect(i: int, h: str, tile: Tile) -> None:
        probs = tile_row_problems(tile, deep)
        if probs:
            raise _row_failure(i, h, probs[0])

    return check_tiles_present(m, lib, on_tile, inspect)


def first_row_problem(m: Manifest, tiles: dict[str, Tile], deep: bool = False) -> tuple[int, str, str] | None:
    """Step 2's row inspection alone, over the rows ``check_tiles_present`` read: the first tile in
    id order whose row ``tile_row_problems`` faults (each hash once, at its first tile), as
    (tile id, hash, problem); None when every row is sound."""
    first: dict[str, int] = {}
    for i, h in enumerate(m.hashes):
        first.setdefault(h, i)
    # ``tile_problems`` of every distinct tile at once: ``bad_rows`` screens their rows per (n, m) and
    # hands each row it doubts to the reference, which has the last word (tests/test_audit_batch.py)
    distinct = list(first)
    faulty = {distinct[k]: probs for k, probs in bad_rows([tile_row(tiles[h], 0) for h in distinct])}
    for h, i in first.items():
        probs = faulty.get(h) or recount_problems(tiles[h], deep)
        if probs:
            return i, h, probs[0]
    return None


def _row_failure(i: int, h: str, problem: str) -> CheckFailed:
    return CheckFailed("tiles", f"tile {i} ({h[:12]}…): {problem}")


_ASIDE: tuple | None = None  # (manifest, tiles, deep) for the forked row inspection, set before it forks


def _rows_aside() -> tuple[int, str, str] | None:
    assert _ASIDE is not None
    return first_row_problem(*_ASIDE)


class _Rows:
    """Step 2's row inspection, either done already (one process) or running in a forked process
    while this one goes on with the steps after it (``verify(workers=2)``). ``raise_first``
    raises its failure, which comes before any later step's (FORMAT order)."""

    def __init__(self, aside: tuple | None = None) -> None:
        self._pool = None
        self._future = None
        self._aside = aside
        if aside is not None:
            global _ASIDE
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            _ASIDE = aside  # inherited by the fork: nothing of the board is pickled across
            try:
                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
                self._future = self._pool.submit(_rows_aside)
            finally:
                _ASIDE = None

    def raise_first(self) -> None:
        if self._future is None:
            return
        future, self._future = self._future, None
        try:
            found = future.result()
        except BrokenProcessPool:  # the process died (killed, out of memory): inspect the rows here
            assert self._aside is not None
            found = first_row_problem(*self._aside)
        finally:
            self.close()
        if found is not None:
            raise _row_failure(*found)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _tiles_step(m: Manifest, lib: Library, deep: bool, on_tile, workers: int) -> tuple[dict[str, Tile], _Rows]:
    """Step 2: the rows read (``check_tiles_present``), then inspected all together
    (``first_row_problem``) — aside, in a forked process, with ``workers`` > 1. A failure while
    reading them is raised only after the rows before it are inspected (``check_tiles``, tile by
    tile), so the first offence in id order is the one named, as ``check_tiles`` alone would."""
    try:
        tiles = check_tiles_present(m, lib, on_tile)
    except TilesError:
        check_tiles(m, lib, deep)  # an earlier tile's row problem, in id order, comes first
        raise
    if workers > 1:
        return tiles, _Rows((m, tiles, deep))
    found = first_row_problem(m, tiles, deep)
    if found is not None:
        raise _row_failure(*found)
    return tiles, _Rows()


def check_fresh(m: Manifest, lib: Library, tiles: dict[str, Tile]) -> None:
    """Step ``fresh``: a ``fresh`` manifest holds no n >= 10 solution twice and none that another
    published board used (``tilelib.spent.unfair``); an ``any`` manifest is not held to it."""
    if m.policy != Reuse.FRESH.value:
        return
    placed = [
        (i, tiles[h].n, solution_hash(tiles[h].n, tiles[h].solution))  # the rows read in step 2
        for i, h in enumerate(m.hashes)
        if held(tiles[h].n)
    ]
    why = unfair(lib.conn, m.day, placed)
    if why is not None:
        raise CheckFailed("fresh", why)


def check_clues(board: Board) -> None:
    """Clues sit in some tile window and never on a cell held by 3+ tiles."""
    for r, c in board.clues:
        if board.owners[r, c] == 0:
            raise CheckFailed("clues", f"clue [{r}, {c}] lies in no tile window")
        if board.owners[r, c] >= 3:
            raise CheckFailed(
                "clues", f"clue [{r}, {c}] is on a cell held by {board.owners[r, c]} tiles (a T-junction or corner)"
            )


def check_frontier(m: Manifest, board: Board, check_status: bool = True) -> Settled:
    """Step 4."""
    st, _f = settle(board)
    if st.status == "ambiguous":
        raise CheckFailed(
            "frontier",
            f"propagation stalls with {st.unknown} unknown cells and the board "
            f"has at least two solutions (after {st.rounds} rounds)",
        )
    if check_status and st.status != m.status:
        raise CheckFailed(
            "frontier",
            f"the manifest claims status {m.status!r} but the board is {st.status!r} "
            f"({st.unknown} cells unknown after {st.rounds} rounds of propagation)",
        )
    return st


def check_closure(m: Manifest, board: Board) -> int | None:
    """Step ``closure``, for a manifest built under the tile-by-tile rule: every tile is solved by a
    player that solves one tile at a time (``referee.closure``). Returns the waves, or None for a
    manifest of the rule before (``play`` absent: the frontier proof was its whole promise)."""
    if m.play_rule != TILE_BY_TILE:
        return None
    c = closure.closure(board)
    if not c.complete:
        raise CheckFailed(closure.STEP, closure.stall_message(c))
    return c.waves


def check_seed(m: Manifest, seed: bytes) -> str:
    """Step 5: the commitment, then the packing re-drawn from the seed.

    The stitcher may split squares it cannot fill into smaller squares and zones (FORMAT §8), so the
    manifest's packing must be the drawn one ("reproduced") or a refinement of it ("refined":
    ``packers.packing.refinement_problem`` — squares only subdivided, zones kept, seed square
    unchanged). Returns which."""
    if len(seed) != 32:
        raise CheckFailed("seed", f"the seed must be 32 bytes, got {len(seed)}")
    if seed_commit(seed) != m.seed_commit:
        raise CheckFailed("seed", "sha256(seed) does not equal the manifest's seed_commit")
    p = m.packing
    _known_packer(m, "seed")
    try:
        again = make_packing(p.name, p.P + 1, seed, dict(p.params))
    except TilesError as e:
        raise CheckFailed("seed", f"re-running packer {p.name} fails: {e}") from None
    if (again.squares, again.zones, again.seed_tile, dict(again.params)) == (
        p.squares,
        p.zones,
        p.seed_tile,
        dict(p.params),
    ):
        return "reproduced"
    problem = refinement_problem(again, p)
    if problem is not None:
        raise CheckFailed(
            "seed",
            f"the packing is neither the one packer {p.name} draws from the seed nor "
            f"a refinement of it by stitcher fallbacks: {problem}",
        )
    return "refined"


def verify(
    manifest: Manifest,
    lib: Library,
    seed: bytes | None = None,
    *,
    deep: bool = False,
    check_status: bool = True,
    on_tile=None,
    workers: int = 1,
) -> VerifyReport:
    """Run FORMAT §10's checks; CheckFailed at the first failure, else a VerifyReport.

    ``on_tile()`` is called once per tile during step 2 (the CLI's progress bar). ``workers=2``
    inspects step 2's rows in a forked process while steps 3 and 4 run here (the daily build, on
    its two cores: ~1 s of a G = 1000 night); the result and the failure raised are the same. A
    process with threads of its own (a server) keeps the default: forking it is not safe."""
    tm: dict[str, float] = {}
    t0 = time.perf_counter()
    check_packing(manifest)
    check_claims(manifest)
    bundled = check_bundle(manifest, lib)
    t1 = time.perf_counter()
    tm["packing"] = t1 - t0
    tiles, rows = _tiles_step(manifest, lib, deep, on_tile, workers)
    try:
        try:
            check_fresh(manifest, lib, tiles)
            t2 = time.perf_counter()
            tm["tiles"] = t2 - t1
            board = assemble(manifest, tiles)
            check_clues(board)
            t3 = time.perf_counter()
            tm["seams"] = t3 - t2
            st = check_frontier(manifest, board, check_status)
            t4 = time.perf_counter()
            tm["frontier"] = t4 - t3
            waves = check_closure(manifest, board)
            if waves is not None:
                tm["closure"] = time.perf_counter() - t4
        except TilesError:
            rows.raise_first()  # a row problem of step 2, found aside, comes first
            raise
        t4 = time.perf_counter()
        rows.raise_first()
        if workers > 1:
            tm["tiles_aside_wait"] = time.perf_counter() - t4
    finally:
        rows.close()
    t4 = time.perf_counter()
    seed_result = None
    if seed is not None:
        seed_result = check_seed(manifest, seed)
        tm["seed"] = time.perf_counter() - t4
    return VerifyReport(
        status=st.status,
        rounds=st.rounds,
        tiles=manifest.tile_count(),
        distinct_tiles=len(tiles),
        clues=len(manifest.clues),
        unknown_after_propagation=st.unknown,
        method=st.method,
        engine_calls=st.calls,
        engine_nodes=st.nodes,
        seed_checked=seed is not None,
        timings=tm,
        packing_vs_seed=seed_result,
        waves=waves,
        bundle=bundled,
    )


__all__ = [
    "VerifyReport",
    "verify",
    "check_packing",
    "check_claims",
    "check_tiles_present",
    "LibraryOutOfDate",
    "check_tiles",
    "first_row_problem",
    "check_fresh",
    "check_clues",
    "check_frontier",
    "check_closure",
    "check_seed",
    "recount_problems",
    "tile_row_problems",
]
