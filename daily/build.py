"""`tiles daily build` (SPEC §9): pull, seed, pack, stitch + drain, clues, verify, manifest, push.

One function, ``build(options, log)``, runs the stages in order, times each,
and reports through ``log`` (one line per stage). It is idempotent per day (a
day whose manifest is already in the library is reported and skipped unless
``force``), holds a lock so two builds never run at once, and ships only a
board that the referee's full, independent ``verify`` finds ``frontier``.
The secret and the seed never reach the manifest or the log; only the
commitment does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from daily.lock import build_lock
from daily.seed import day_seed, seed_commit
from packers import DEFAULT_PACKER, check_size, make_packing
from referee.board import build_board
from referee.frontier import add_clues
from referee.manifest import Manifest
from referee.verify import verify
from tilelib.difficulty import parse_profile
from stitcher.stitch import stitch
from tilelib import ledger
from tilelib.errors import VerificationFailed
from tilelib.fsio import atomic_write
from tilelib.rng import Stream
from tilelib.store import Library


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
    profile: object = None             # difficulty profile: stitcher.profile JSON form, preset name or None


@dataclass
class BuildResult:
    day: str
    skipped: bool
    manifest_path: Path | None = None
    status: str | None = None
    tiles: int = 0
    clues: int = 0
    verify_line: str = ""
    seconds: dict = field(default_factory=dict)
    stitch: dict = field(default_factory=dict)


def _summary(stats) -> dict:
    """Deterministic stitch counters for the manifest (no timings: the manifest must rebuild bit-for-bit)."""
    keys = ("hits_first", "misses_first", "drained", "nofit", "fallbacks")
    return {k: stats.total(k) for k in keys} | {"first_fill": round(stats.first_fill, 6),
                                               "final_fill": round(stats.final_fill, 6)}


def build(opts: BuildOptions, log: Callable[[str], None] = print,
          progress: Callable[[int, int], None] | None = None) -> BuildResult:
    """Run the nightly build for ``opts.day``; see the module docstring."""
    size = check_size(opts.size)
    profile = parse_profile(opts.profile)          # bad input fails before any work
    seed = opts.seed if opts.seed is not None else day_seed(opts.secret, opts.day)
    commit = seed_commit(seed)
    res = BuildResult(opts.day, skipped=False)
    sec = res.seconds

    def stage(name: str, t0: float, msg: str) -> None:
        sec[name] = round(time.perf_counter() - t0, 3)
        log(f"{name:<8} {sec[name]:7.2f} s  {msg}")

    with build_lock(opts.library):
        if opts.remote:
            from remote.backend import open_backend
            from remote.sync import pull
            t0 = time.perf_counter()
            r = pull(opts.library, open_backend(opts.remote))
            stage("pull", t0, f"{r.status}, {r.tiles_added:,} tiles added")
        with Library.open(opts.library, create=True) as lib:
            if ledger.get_manifest(lib.conn, opts.day) is not None and not opts.force:
                log(f"manifest for {opts.day} already in {opts.library}; nothing to do (--force rebuilds)")
                res.skipped = True
                return res
            t0 = time.perf_counter()
            packing = make_packing(opts.packer, size, seed, opts.params)
            stage("pack", t0, f"{opts.packer} G={size}: {len(packing.squares):,} squares, "
                              f"zone {100 * packing.zone_fraction():.2f}%")

            t0 = time.perf_counter()
            st = stitch(packing, lib, Stream(seed, "stitch"), drain=True, progress=progress, profile=profile)
            s = st.stats
            res.stitch = _summary(s)
            stage("stitch", t0, f"{s.placements:,} placed, first-pass hits {s.total('hits_first'):,}, "
                                f"misses {s.total('misses_first'):,}, drained {s.total('drained'):,}, "
                                f"nofit {s.total('nofit'):,}, fallbacks {s.total('fallbacks'):,}, "
                                f"final fill {100 * s.final_fill:.2f}%")

            t0 = time.perf_counter()
            manifest = Manifest(opts.day, commit, st.packing, tuple(h for h, _ in st.placements),
                                tuple(t for _, t in st.placements),
                                difficulty=None if profile is None else profile.to_json())
            clues = add_clues(build_board(manifest, lib))
            stats = {"tiles": len(st.packing.squares), "zone_fraction": round(st.packing.zone_fraction(), 6),
                     "clues": len(clues), "stitch": res.stitch}
            manifest = manifest.with_clues(clues, status="frontier", stats=stats)
            stage("clues", t0, f"{len(clues)} clues ({100 * len(clues) / max(1, len(st.packing.squares)):.2f} "
                               f"per 100 tiles)")

            t0 = time.perf_counter()
            report = verify(manifest, lib)
            if report.status != "frontier":
                raise VerificationFailed(f"board of {opts.day} is {report.status}, not frontier; not shipped")
            stage("verify", t0, report.line())

            path = opts.out_dir / f"{opts.day}.json"
            text = manifest.to_json()
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, text)
            ledger.put_manifest(lib.conn, opts.day, commit, text, replace=opts.force)
            res.manifest_path, res.status, res.verify_line = path, report.status, report.line()
            res.tiles, res.clues = manifest.tile_count(), len(clues)
        if opts.remote:
            from remote.backend import open_backend
            from remote.sync import push
            t0 = time.perf_counter()
            r = push(opts.library, open_backend(opts.remote))
            stage("push", t0, f"{r.status}, {r.new_tiles:,} new tiles, {r.attempts} attempt(s)")
    return res
