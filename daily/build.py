"""`tiles daily build` (FORMAT §9): pull, check, seed, pack, stitch + drain, clues, verify, manifest, push.

One function, ``build(options, log)``, resolves the options once into a frozen ``Night`` (``plan``),
opens the library once, runs the stages in order on that ``Library`` (``_build_day``: pack →
stitch → clues → verify → store → stock), times each, and reports through ``log`` (one line per
stage, ``Stages``). It holds a lock so two
builds never run at once, refuses a damaged library before any work (exit 3:
an empty file, a failing quick_check, rows or stored manifests changed since
they were verified), and ships only a board that the referee's full,
independent ``verify`` finds ``frontier``.

With a remote, the build first publishes whatever an earlier run left
unpushed, so it starts from exactly the snapshot HEAD names; the manifest
records that snapshot and the versions that decide the output (``build``,
FORMAT §13), and ``tiles referee verify --replay`` reruns the build from them.
It is idempotent per day: a day whose manifest is already in the library is
not rebuilt (unless ``force``), but its manifest file is rewritten if lost and
the library is still pushed if the earlier push failed. A stored board of the day under another
seed commitment (a peer's, merged from a shared remote) is not this operator's: the build refuses
it (exit 5, ``ForeignDay``) and ``force`` replaces it.
The secret and the seed never reach the manifest or the log; only the
commitment does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from daily import fairness
from daily.lock import build_lock
from daily.observe import disk_writes, peak_rss_bytes, write_calls
from daily.options import BuildOptions
from daily.provenance import build_record
from daily.seed import day_seed
from packers import check_request, check_size, make_packing
from packers.packing import Packing
from referee import gate
from referee.board import build_board
from referee.closure import add_play_clues
from referee.frontier import add_clues
from referee.manifest import PLAY_RULES, TILE_BY_TILE, Manifest
from referee.verify import verify
from stitcher.regions import default_workers
from stitcher.stitch import Drain, StitchOptions, StitchResult, stitch
from tilelib import heap, ledger, stock
from tilelib.days import seed_commit
from tilelib.db import atomic
from tilelib.difficulty import Profile, parse_profile
from tilelib.errors import BadInput, CorruptLibrary, VerificationFailed
from tilelib.fsio import atomic_write, check_placeable
from tilelib.rng import Stream
from tilelib.spent import Reuse, board_rows
from tilelib.store import Library
from trust.checks import check_library, mark_verified


@dataclass
class BuildResult:
    day: str
    skipped: bool
    manifest_path: Path | None = None
    status: str | None = None
    tiles: int = 0
    clues: int = 0
    play_clues: int = 0  # of ``clues``, those the tile-by-tile rule added
    verify_line: str = ""
    seconds: dict = field(default_factory=dict)
    stitch: dict = field(default_factory=dict)
    stages: dict = field(default_factory=dict)  # per stage: seconds, what it did, bytes written
    stitch_detail: dict = field(default_factory=dict)  # StitchStats.as_dict(): timings inside the stitch
    fairness: dict = field(default_factory=dict)  # daily.fairness.report: fresh and reused tiles
    stock: dict = field(default_factory=dict)  # tilelib.stock.report after the board is stored

    def summary(self) -> dict:
        """The machine-readable summary ``tiles daily build --json`` prints (one JSON object)."""
        return {
            "day": self.day,
            "skipped": self.skipped,
            "status": self.status,
            "manifest": str(self.manifest_path) if self.manifest_path else None,
            "tiles": self.tiles,
            "clues": self.clues,
            "play_clues": self.play_clues,
            "verify": self.verify_line,
            "stages": self.stages,
            "stitch": self.stitch_detail,
            "fairness": self.fairness,
            "stock": self.stock,
            "peak_rss_bytes": peak_rss_bytes(),
            "disk_write_bytes": sum(v.get("disk_write_bytes") or 0 for v in self.stages.values()),
            "write_call_bytes": sum(v.get("write_call_bytes") or 0 for v in self.stages.values()),
        }


def _summary(stats) -> dict:
    """Deterministic stitch counters for the manifest (no timings: the manifest must rebuild bit-for-bit)."""
    keys = ("hits_first", "misses_first", "drained", "nofit", "fallbacks")
    return {k: stats.total(k) for k in keys} | {
        "first_fill": round(stats.first_fill, 6),
        "final_fill": round(stats.final_fill, 6),
    }


@dataclass(frozen=True)
class Night:
    """One nightly build with every choice made and checked: the one value the stages receive.

    ``plan(options)`` makes it once from ``BuildOptions`` (the CLI's raw values) before any file is
    touched; a bad value is ``BadInput`` (exit 2) then, never half-way. ``start`` is the start state
    the manifest records: given by a replay, found by the sync with a remote (``with_start``),
    else None."""

    day: str
    size: int  # G, checked against the packer
    packer: str
    params: dict | None
    seed: bytes
    commit: str  # sha256 of the seed: what the manifest and the log may show
    reuse: Reuse
    stitch: StitchOptions  # how the stitch runs, taken whole: the drain on, the difficulty profile (None:
    #                        the library's own mix), the workers (the board is the same for any), the fair rule
    play: str  # PLAY_RULES
    library: Path
    manifest_path: Path  # where DAY.json is written (``--out``)
    remote: str | None
    force: bool
    start: dict | None

    @property
    def fresh(self) -> bool:
        return self.stitch.fresh

    @property
    def profile(self) -> Profile | None:
        return self.stitch.profile

    @property
    def workers(self) -> int:
        return self.stitch.workers

    @property
    def tile_by_tile(self) -> bool:
        return self.play == TILE_BY_TILE

    def with_start(self, start: dict | None) -> Night:
        return replace(self, start=start)


def plan(opts: BuildOptions) -> Night:
    """The ``Night`` that ``opts`` asks for; BadInput (exit 2) before any file is touched."""
    size = check_size(opts.size)
    check_request(opts.packer, size, opts.params)
    check_placeable(opts.out_dir, "--out", want_dir=True)
    reuse = Reuse.parse(opts.reuse)
    if opts.play not in PLAY_RULES:
        raise BadInput(f"play rule {opts.play!r}: expected one of {', '.join(PLAY_RULES)}")
    try:
        stitch = StitchOptions(
            drain=Drain.INLINE,
            profile=parse_profile(opts.profile),
            workers=default_workers() if opts.workers is None else opts.workers,
            fresh=reuse is Reuse.FRESH,
        )
    except ValueError as err:
        raise BadInput(str(err)) from None
    seed = opts.seed if opts.seed is not None else day_seed(opts.secret, opts.day)
    return Night(
        day=opts.day,
        size=size,
        packer=opts.packer,
        params=opts.params,
        seed=seed,
        commit=seed_commit(seed),
        reuse=reuse,
        stitch=stitch,
        play=opts.play,
        library=Path(opts.library),
        manifest_path=Path(opts.out_dir) / f"{opts.day}.json",
        remote=opts.remote,
        force=opts.force,
        start=opts.start,
    )


class Stages:
    """The build's report as it goes: each stage's seconds, what it did and the bytes written since
    the previous stage ended (stages run back to back), into ``res.stages``, and one log line."""

    def __init__(self, res: BuildResult, log: Callable[[str], None]) -> None:
        self.res, self.log = res, log
        self._written = [disk_writes(), write_calls()]

    def done(self, name: str, t0: float, msg: str, **detail) -> None:
        sec = self.res.seconds[name] = round(time.perf_counter() - t0, 3)
        w = [disk_writes(), write_calls()]
        self.res.stages[name] = {"seconds": sec, **detail} | {
            key: None if a is None or b is None else a - b
            for key, a, b in zip(("disk_write_bytes", "write_call_bytes"), w, self._written, strict=True)
        }
        self._written = w
        self.log(f"{name:<8} {sec:7.2f} s  {msg}")


def build(
    opts: BuildOptions, log: Callable[[str], None] = print, progress: Callable[..., None] | None = None
) -> BuildResult:
    """Run the nightly build for ``opts.day``; see the module docstring. ``progress(done, total,
    stats)`` is called after each square of the stitch (``daily.observe.ProgressLog`` logs it).

    The library is opened once for the build's own stages and handed to each as that ``Library``;
    the remote's pull and push open the file themselves (a pull may replace it by a clone)."""
    night = plan(opts)
    res = BuildResult(night.day, skipped=False)
    stages = Stages(res, log)
    _refuse_empty(night.library)
    with build_lock(night.library):
        if night.remote:
            _pull(night, stages)
        with Library.open(night.library, create=True) as lib:
            if night.remote:
                night = night.with_start(_start_state(night, lib, stages))
            t0 = time.perf_counter()
            rep = check_library(lib, "new")  # exit 3 before any work on a damaged file
            mark_verified(lib, rep)
            stages.done("check", t0, rep.line(), rows_checked=rep.rows_checked, integrity=rep.integrity)
            done = gate.stored(lib, night.day)
            if done is not None and not night.force:
                _refuse_foreign(night, done)
                _keep(night, done, res, log)
            else:
                _build_day(night, lib, stages, progress)
        if night.remote:
            _push(night, res, stages)
    return res


class ForeignDay(VerificationFailed):
    """The library holds a board of the day under another operator's seed commitment (exit 5)."""


def _refuse_foreign(night: Night, done: Manifest) -> None:
    """A day belongs to its operator (FORMAT §9): a stored board of the day is this build's only when
    it carries the commitment this operator's secret (or ``--seed``) gives. Another one — a peer's,
    merged from a shared remote — is never taken as "already built": ForeignDay names the day and
    both commitments, and ``--force`` replaces it with this operator's board."""
    if done.seed_commit != night.commit:
        raise ForeignDay(
            f"{night.day}: the library holds a board of that day under seed commitment {done.seed_commit[:16]}…, "
            f"not this operator's {night.commit[:16]}…; nothing built (--force builds this operator's board "
            "in its place)"
        )


def _keep(night: Night, done: Manifest, res: BuildResult, log) -> None:
    """A day already built: its manifest file rewritten if lost or damaged, nothing rebuilt."""
    path = night.manifest_path
    text = done.to_json()
    if not path.is_file() or path.read_bytes() != text.encode("ascii"):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
        log(f"manifest for {night.day} rewritten from the library to {path}")
    log(f"manifest for {night.day} already in {night.library}; nothing to build (--force rebuilds)")
    res.skipped, res.manifest_path, res.status = True, path, done.status


def _push(night: Night, res: BuildResult, stages: Stages) -> None:
    """Push the library; a fresh board that lost a race is withdrawn and its file set aside."""
    from remote.backend import open_backend
    from remote.fair import BoardLostRace
    from remote.sync import push

    t0 = time.perf_counter()
    try:
        # the check stage proved the whole file in this process: the push checks what came after
        r = push(night.library, open_backend(night.remote), check="since")
    except BoardLostRace as err:
        raise type(err)(f"{err}{_set_aside(res.manifest_path)}") from err
    checked = r.check.rows_checked if r.check is not None else 0
    stages.done("push", t0, f"{r.status}, {r.new_tiles:,} new tiles, {r.attempts} attempt(s)", rows_checked=checked)


def _set_aside(path: Path | None) -> str:
    """Rename a withdrawn board's manifest file to ``DAY.json.withdrawn`` (it was never published:
    nothing should serve it, and nothing is lost); the note for the error line."""
    if path is None or not path.is_file():
        return ""
    aside = path.with_name(path.name + ".withdrawn")
    path.replace(aside)
    return f" (its manifest file is set aside as {aside})"


def _refuse_empty(path: Path) -> None:
    """A zero-length library file is damage (a crash, a full disk), never silently replaced."""
    check_placeable(path, "library path")
    if path.exists() and path.stat().st_size == 0:
        raise CorruptLibrary(
            f"{path} is empty (zero bytes): refusing to build on it; restore it, or delete it to start a new library"
        )


def _pull(night: Night, stages: Stages) -> None:
    """Merge what the remote holds into the library file."""
    from remote.backend import open_backend
    from remote.sync import pull

    t0 = time.perf_counter()
    r = pull(night.library, open_backend(night.remote))
    if r.note:
        stages.log(r.note)
    stages.done("pull", t0, f"{r.status}, {r.tiles_added:,} tiles added")


def _start_state(night: Night, lib: Library, stages: Stages) -> dict:
    """Push what a failed earlier run left unpublished, so the build starts from exactly the state
    HEAD names; that state (its base snapshot and deltas) is what the manifest records."""
    from remote.backend import open_backend
    from remote.sync import ahead, push, read_state

    backend = open_backend(night.remote)
    if ahead(lib, str(backend.url)):
        t0 = time.perf_counter()
        p = push(night.library, backend)
        stages.done(
            "publish",
            t0,
            f"{p.status} the start state before building (local rows the remote lacked), {p.new_tiles:,} new tiles",
        )
    st = read_state(lib, str(backend.url))
    # a file with no (readable) state is ``ahead``, and the push above wrote one: every push does
    assert st is not None
    return {"snapshot": st.used or st.snapshot, "deltas": list(st.deltas)}


def _build_day(night: Night, lib: Library, stages: Stages, progress) -> None:
    """The stages of one day, each handing its value to the next: ``Night`` → pack (``Packing``) →
    stitch (``StitchResult``) → clues (``Manifest`` with clues) → verify (``VerifyReport``) → store
    (the manifest file, its row and spent rows) → stock (what the night drew)."""
    res = stages.res
    packing = _pack(night, stages)
    st = _stitch(night, lib, packing, stages, progress)
    heap.release(lib.conn)  # the stitch's index and pages, before the board stages and verify's fork
    manifest, played = _clues(night, lib, st, stages)
    report = _verify(night, lib, manifest, stages)
    _store(night, lib, manifest)
    res.manifest_path, res.status, res.verify_line = night.manifest_path, report.status, report.line()
    _stock(lib, manifest, stages)
    res.tiles, res.clues, res.play_clues = manifest.tile_count(), len(manifest.clues), played


def _pack(night: Night, stages: Stages) -> Packing:
    t0 = time.perf_counter()
    packing = make_packing(night.packer, night.size, night.seed, night.params)
    stages.done(
        "pack",
        t0,
        f"{night.packer} G={night.size}: {len(packing.squares):,} squares, zone {100 * packing.zone_fraction():.2f}%",
        squares=len(packing.squares),
        zone_fraction=round(packing.zone_fraction(), 6),
    )
    return packing


def _stitch(night: Night, lib: Library, packing: Packing, stages: Stages, progress) -> StitchResult:
    res = stages.res
    t0 = time.perf_counter()
    start_rowid = lib.conn.execute("SELECT coalesce(max(rowid), 0) FROM tiles").fetchone()[0]
    st = stitch(
        packing,
        lib,
        Stream(night.seed, "stitch"),
        night.stitch,
        progress=progress,
    )
    s = st.stats
    res.stitch = _summary(s)
    res.stitch_detail = s.as_dict()
    res.fairness = fairness.report(
        lib.conn, [h for h, _ in st.placements], [q[2] + 1 for q in st.packing.squares], start_rowid
    )
    stages.done(
        "stitch",
        t0,
        f"{s.placements:,} placed, first-pass hits {s.total('hits_first'):,}, "
        f"misses {s.total('misses_first'):,}, drained {s.total('drained'):,}, "
        f"nofit {s.total('nofit'):,}, fallbacks {s.total('fallbacks'):,}"
        + (f" ({s.total('isolated')} cut off from the seed tile: made zone)" if s.total("isolated") else "")
        + ", "
        f"final fill {100 * s.final_fill:.2f}%; {night.reuse.value}: "
        f"{fairness.line(res.fairness)}",
        placements=s.placements,
        made=s.made,
        reuse=night.reuse.value,
        fairness=res.fairness,
        **res.stitch,
        index=s.index,
        split={k: round(v, 3) for k, v in s.seconds.items()},
    )
    return st


def _clues(night: Night, lib: Library, st: StitchResult, stages: Stages) -> tuple[Manifest, int]:
    """The manifest of the stitched board with its clues: those propagation needs to settle every
    cell (status frontier), then those a player solving tile by tile needs never to stall. Returns
    it and how many clues the second rule added."""
    t0 = time.perf_counter()
    manifest = Manifest(
        night.day,
        night.commit,
        st.packing,
        tuple(h for h, _ in st.placements),
        tuple(t for _, t in st.placements),
        difficulty=None if night.profile is None else night.profile.to_json(),
        reuse=Reuse.FRESH.value if night.fresh else None,
        play=TILE_BY_TILE if night.tile_by_tile else None,
        build=build_record(night.start),
    )
    board = build_board(manifest, lib)
    clues = add_clues(board)
    played = add_play_clues(board.with_clues(clues)) if night.tile_by_tile else []
    clues += played
    stats = {
        "tiles": len(st.packing.squares),
        "zone_fraction": round(st.packing.zone_fraction(), 6),
        "clues": len(clues),
        "stitch": stages.res.stitch,
    }
    manifest = manifest.with_clues(clues, status="frontier", stats=stats)
    stages.done(
        "clues",
        t0,
        f"{len(clues)} clues ({100 * len(clues) / max(1, len(st.packing.squares)):.2f} "
        f"per 100 tiles)" + (f", {len(played)} of them for tile-by-tile play" if night.tile_by_tile else ""),
        clues=len(clues),
        play_clues=len(played),
    )
    return manifest, len(played)


def _verify(night: Night, lib: Library, manifest: Manifest, stages: Stages):
    """The referee's full verify; a board that is not ``frontier`` is never shipped (exit 5)."""
    t0 = time.perf_counter()
    report = verify(manifest, lib, workers=min(2, night.workers))  # rows inspected beside the board steps
    if report.status != "frontier":
        raise VerificationFailed(f"board of {night.day} is {report.status}, not frontier; not shipped")
    stages.done("verify", t0, report.line(), status=report.status)
    return report


def _store(night: Night, lib: Library, manifest: Manifest) -> None:
    """The manifest file, then its library row with the board's spent rows."""
    text = manifest.to_json()
    night.manifest_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(night.manifest_path, text)
    ledger.put_manifest(
        lib.conn,
        night.day,
        night.commit,
        text,
        replace=night.force,
        spent=board_rows(lib.conn, manifest.hashes, manifest.digest(), manifest.day),
    )


def _stock(lib: Library, manifest: Manifest, stages: Stages) -> None:
    """What the night drew from the stock of unspent solutions, recorded, and what is left."""
    res = stages.res
    t0 = time.perf_counter()
    loaded = stock.load(lib.conn, lib.path)
    with atomic(lib.conn):
        stock.record_night(lib.conn, manifest.day, manifest.digest(), res.fairness["per_n"], stock.counts(loaded[0]))
    res.stock = stock.report(lib.conn, lib.path, loaded=loaded)
    stages.done("stock", t0, stock.line(res.stock), load=res.stock["load"])
