"""`tiles daily build` (FORMAT §9): pull, check, seed, pack, stitch + drain, clues, verify, manifest, push.

One function, ``build(options, log)``, runs the stages in order, times each,
and reports through ``log`` (one line per stage). It holds a lock so two
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
the library is still pushed if the earlier push failed.
The secret and the seed never reach the manifest or the log; only the
commitment does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from daily.lock import build_lock
from daily.observe import disk_writes, peak_rss_bytes, write_calls
from daily.provenance import build_record
from daily.seed import day_seed
from packers import DEFAULT_PACKER, check_request, check_size, make_packing
from referee import gate
from referee.board import build_board
from referee.closure import add_play_clues
from referee.frontier import add_clues
from referee.manifest import PLAY_RULES, TILE_BY_TILE, Manifest
from referee.verify import verify
from tilelib.difficulty import parse_profile
from stitcher.regions import default_workers
from stitcher.stitch import stitch
from tilelib import ledger, stock
from tilelib.db import transaction
from referee.checks import check_library, mark_verified
from tilelib.days import seed_commit
from tilelib.errors import BadInput, CorruptLibrary, VerificationFailed
from tilelib.fsio import atomic_write, check_placeable
from tilelib.rng import Stream
from tilelib.spent import Reuse, board_rows
from tilelib.store import Library
from daily import fairness


@dataclass(frozen=True)
class BuildOptions:
    day: str
    library: Path
    out_dir: Path
    size: int = 1000
    packer: str = DEFAULT_PACKER
    params: dict | None = None
    seed: bytes | None = None          # None: derived from the secret and the day
    secret: str | None = None
    remote: str | None = None
    force: bool = False
    start: dict | None = None  # replay: record this start state {snapshot, deltas} (no remote to ask)
    profile: object = None             # difficulty profile: stitcher.profile JSON form, preset name or None
    workers: int = field(default_factory=default_workers)   # processes for the stitch's halves;
    #                                    the board is the same for any value (stitcher/regions.py)
    reuse: str = Reuse.FRESH.value     # the fair rule (tilelib.spent): "fresh" or "any"
    play: str = TILE_BY_TILE           # "tile-by-tile": clues until referee.closure covers the board;
    #                                    "propagation": the frontier proof alone (replays of older days)


@dataclass
class BuildResult:
    day: str
    skipped: bool
    manifest_path: Path | None = None
    status: str | None = None
    tiles: int = 0
    clues: int = 0
    play_clues: int = 0                 # of ``clues``, those the tile-by-tile rule added
    verify_line: str = ""
    seconds: dict = field(default_factory=dict)
    stitch: dict = field(default_factory=dict)
    stages: dict = field(default_factory=dict)          # per stage: seconds, what it did, bytes written
    stitch_detail: dict = field(default_factory=dict)   # StitchStats.as_dict(): timings inside the stitch
    fairness: dict = field(default_factory=dict)        # daily.fairness.report: fresh and reused tiles
    stock: dict = field(default_factory=dict)           # tilelib.stock.report after the board is stored

    def summary(self) -> dict:
        """The machine-readable summary ``tiles daily build --json`` prints (one JSON object)."""
        return {"day": self.day, "skipped": self.skipped, "status": self.status,
                "manifest": str(self.manifest_path) if self.manifest_path else None, "tiles": self.tiles,
                "clues": self.clues, "play_clues": self.play_clues, "verify": self.verify_line, "stages": self.stages,
                "stitch": self.stitch_detail, "fairness": self.fairness, "stock": self.stock, "peak_rss_bytes": peak_rss_bytes(),
                "disk_write_bytes": sum(v.get("disk_write_bytes") or 0 for v in self.stages.values()),
                "write_call_bytes": sum(v.get("write_call_bytes") or 0 for v in self.stages.values())}


def _summary(stats) -> dict:
    """Deterministic stitch counters for the manifest (no timings: the manifest must rebuild bit-for-bit)."""
    keys = ("hits_first", "misses_first", "drained", "nofit", "fallbacks")
    return {k: stats.total(k) for k in keys} | {"first_fill": round(stats.first_fill, 6),
                                               "final_fill": round(stats.final_fill, 6)}


def build(opts: BuildOptions, log: Callable[[str], None] = print,
          progress: Callable[..., None] | None = None) -> BuildResult:
    """Run the nightly build for ``opts.day``; see the module docstring. ``progress(done, total,
    stats)`` is called after each square of the stitch (``daily.observe.ProgressLog`` logs it)."""
    size = check_size(opts.size)
    check_request(opts.packer, size, opts.params)    # bad input: fail before any file is touched
    check_placeable(opts.out_dir, "--out", want_dir=True)   # checked before any work, not after it
    policy = Reuse.parse(opts.reuse)
    if opts.play not in PLAY_RULES:
        raise BadInput(f"play rule {opts.play!r}: expected one of {', '.join(PLAY_RULES)}")
    profile = parse_profile(opts.profile)
    seed = opts.seed if opts.seed is not None else day_seed(opts.secret, opts.day)
    commit = seed_commit(seed)
    res = BuildResult(opts.day, skipped=False)
    sec = res.seconds

    written = [disk_writes(), write_calls()]

    def stage(name: str, t0: float, msg: str, **detail) -> None:
        sec[name] = round(time.perf_counter() - t0, 3)
        w = [disk_writes(), write_calls()]
        # bytes written since the previous stage ended (stages run back to back)
        res.stages[name] = {"seconds": sec[name], **detail} | {
            key: None if a is None or b is None else a - b
            for key, a, b in zip(("disk_write_bytes", "write_call_bytes"), w, written)}
        written[:] = w
        log(f"{name:<8} {sec[name]:7.2f} s  {msg}")

    _refuse_empty(opts.library)
    with build_lock(opts.library):
        start = opts.start
        if opts.remote:
            start = _sync_before(opts, stage, log)
        with Library.open(opts.library, create=True) as lib:
            t0 = time.perf_counter()
            rep = check_library(lib, "new")          # exit 3 before any work on a damaged file
            mark_verified(lib, rep)
            stage("check", t0, rep.line(), rows_checked=rep.rows_checked, integrity=rep.integrity)
            done = gate.stored(lib, opts.day)
            if done is not None and not opts.force:
                path = opts.out_dir / f"{opts.day}.json"
                text = done.to_json()
                if not path.is_file() or path.read_bytes() != text.encode("ascii"):
                    path.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write(path, text)             # a lost or damaged manifest file is rewritten
                    log(f"manifest for {opts.day} rewritten from the library to {path}")
                log(f"manifest for {opts.day} already in {opts.library}; nothing to build (--force rebuilds)")
                res.skipped, res.manifest_path, res.status = True, path, done.status
            else:
                _build_day(opts, lib, size, seed, commit, start, profile, policy, res, stage, progress)
        if opts.remote:
            from remote.backend import open_backend
            from remote.fair import BoardLostRace
            from remote.sync import push
            t0 = time.perf_counter()
            try:
                r = push(opts.library, open_backend(opts.remote))
            except BoardLostRace as err:
                raise type(err)(f"{err}{_set_aside(res.manifest_path)}") from err
            stage("push", t0, f"{r.status}, {r.new_tiles:,} new tiles, {r.attempts} attempt(s)")
    return res


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
        raise CorruptLibrary(f"{path} is empty (zero bytes): refusing to build on it; restore it, or delete it "
                             "to start a new library")


def _sync_before(opts: BuildOptions, stage, log) -> dict:
    """Pull; push what a failed earlier run left unpublished, so the build starts from exactly the
    state HEAD names. Returns that state: its base snapshot and deltas (the manifest's ``build``)."""
    from remote.backend import open_backend
    from remote.sync import ahead, pull, push, read_state

    backend = open_backend(opts.remote)
    t0 = time.perf_counter()
    r = pull(opts.library, backend)
    if r.note:
        log(r.note)
    stage("pull", t0, f"{r.status}, {r.tiles_added:,} tiles added")
    with Library.open(opts.library, create=True) as lib:
        unpublished = ahead(lib, str(backend.url))
    if unpublished:
        t0 = time.perf_counter()
        p = push(opts.library, backend)
        stage("publish", t0, f"{p.status} the start state before building (local rows the remote lacked), "
                          f"{p.new_tiles:,} new tiles")
    with Library.open(opts.library) as lib:
        st = read_state(lib, str(backend.url))
    return {"snapshot": st.used or st.snapshot, "deltas": list(st.deltas)}


def _build_day(opts, lib, size, seed, commit, start, profile, policy, res, stage, progress) -> None:
    """Pack, stitch + drain, clues, verify, write the manifest and spend its solutions (the stages
    of one day)."""
    t0 = time.perf_counter()
    packing = make_packing(opts.packer, size, seed, opts.params)
    stage("pack", t0, f"{opts.packer} G={size}: {len(packing.squares):,} squares, "
                      f"zone {100 * packing.zone_fraction():.2f}%",
          squares=len(packing.squares), zone_fraction=round(packing.zone_fraction(), 6))

    t0 = time.perf_counter()
    start_rowid = lib.conn.execute("SELECT coalesce(max(rowid), 0) FROM tiles").fetchone()[0]
    st = stitch(packing, lib, Stream(seed, "stitch"), drain=True, progress=progress, profile=profile,
                workers=opts.workers, fresh=policy is Reuse.FRESH)
    s = st.stats
    res.stitch = _summary(s)
    res.stitch_detail = s.as_dict()
    res.fairness = fairness.report(lib.conn, [h for h, _ in st.placements],
                                   [q[2] + 1 for q in st.packing.squares], start_rowid)
    stage("stitch", t0, f"{s.placements:,} placed, first-pass hits {s.total('hits_first'):,}, "
                        f"misses {s.total('misses_first'):,}, drained {s.total('drained'):,}, "
                        f"nofit {s.total('nofit'):,}, fallbacks {s.total('fallbacks'):,}"
                        + (f" ({s.total('isolated')} cut off from the seed tile: made zone)" if s.total('isolated') else "")
                        + ", "
                        f"final fill {100 * s.final_fill:.2f}%; {policy.value}: {fairness.line(res.fairness)}",
          placements=s.placements, made=s.made, reuse=policy.value, fairness=res.fairness,
          **res.stitch, index=s.index, split={k: round(v, 3) for k, v in s.seconds.items()})

    t0 = time.perf_counter()
    tile_by_tile = opts.play == TILE_BY_TILE
    manifest = Manifest(opts.day, commit, st.packing, tuple(h for h, _ in st.placements),
                        tuple(t for _, t in st.placements),
                        difficulty=None if profile is None else profile.to_json(),
                        reuse=Reuse.FRESH.value if policy is Reuse.FRESH else None,
                        play=TILE_BY_TILE if tile_by_tile else None, build=build_record(start))
    board = build_board(manifest, lib)
    clues = add_clues(board)                      # propagation settles every cell (status frontier)
    played = add_play_clues(board.with_clues(clues)) if tile_by_tile else []
    clues += played                               # ... and a player solving tile by tile never stalls
    stats = {"tiles": len(st.packing.squares), "zone_fraction": round(st.packing.zone_fraction(), 6),
             "clues": len(clues), "stitch": res.stitch}
    manifest = manifest.with_clues(clues, status="frontier", stats=stats)
    stage("clues", t0, f"{len(clues)} clues ({100 * len(clues) / max(1, len(st.packing.squares)):.2f} "
                       f"per 100 tiles)" + (f", {len(played)} of them for tile-by-tile play"
                                            if tile_by_tile else ""),
          clues=len(clues), play_clues=len(played))

    t0 = time.perf_counter()
    report = verify(manifest, lib)
    if report.status != "frontier":
        raise VerificationFailed(f"board of {opts.day} is {report.status}, not frontier; not shipped")
    stage("verify", t0, report.line(), status=report.status)

    path = opts.out_dir / f"{opts.day}.json"
    text = manifest.to_json()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
    ledger.put_manifest(lib.conn, opts.day, commit, text, replace=opts.force,
                        spent=board_rows(lib.conn, manifest.hashes, manifest.digest(), manifest.day))
    res.manifest_path, res.status, res.verify_line = path, report.status, report.line()
    t0 = time.perf_counter()
    loaded = stock.load(lib.conn, opts.library)
    with transaction(lib.conn):
        stock.record_night(lib.conn, manifest.day, manifest.digest(), res.fairness["per_n"], stock.counts(loaded[0]))
    res.stock = stock.report(lib.conn, opts.library, loaded=loaded)
    stage("stock", t0, stock.line(res.stock), load=res.stock["load"])
    res.tiles, res.clues, res.play_clues = manifest.tile_count(), len(clues), len(played)

