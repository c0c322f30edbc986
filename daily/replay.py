"""Replay a day's build from its seed and start snapshot and compare it with the manifest (FORMAT §13).

A board is a pure function of (seed, start snapshot, code). The manifest's ``build`` key names
the snapshot (HEAD when the build started, before its own additions) and the versions of the
code that decide the output. ``replay`` refuses when those versions differ here
(``ReplayImpossible``: a replay could only disagree, which would prove nothing), fetches the
snapshot from the remote and proves it sound (``remote.snapshot.fetch_verified``), reruns the
whole build on a private copy (same packer and params, stitch, drain, clues) and compares the
rebuilt manifest with the given one. The first difference — a tile's (hash, t), a square, a zone,
a clue, a stat — fails with ``CheckFailed("replay", …)`` (exit 5) naming it.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from daily.provenance import version_mismatch
from referee.board import CheckFailed
from referee.manifest import Manifest
from tilelib.errors import TilesError


class ReplayImpossible(TilesError):
    """The manifest cannot be replayed here: no start snapshot recorded, or other versions."""


@dataclass(frozen=True)
class ReplayReport:
    snapshot: str
    seconds: float

    def line(self) -> str:
        return f"replay ok: rebuilt from snapshot {self.snapshot[:12]}… byte for byte in {self.seconds:.1f} s"


def first_difference(want: Manifest, got: Manifest) -> str | None:
    """The first way ``got`` (the replay) differs from ``want`` (the manifest), in manifest order."""
    if want.to_json() == got.to_json():
        return None
    if want.packing.P != got.packing.P:
        return f"board: the replay is {got.G} cells, the manifest {want.G}"
    if want.packing.seed_tile != got.packing.seed_tile:
        return f"seed_tile: the replay's is {got.packing.seed_tile}, the manifest's {want.packing.seed_tile}"
    for i in range(max(want.tile_count(), got.tile_count())):
        if i >= got.tile_count():
            return f"tile {i}: the manifest has it, the replay has {got.tile_count()} tiles"
        if i >= want.tile_count():
            return f"tile {i}: the replay has it, the manifest has {want.tile_count()} tiles"
        a, b = want.tile(i), got.tile(i)
        if a != b:
            keys = [k for k in ("x0", "y0", "n", "hash", "t") if a[k] != b[k]]
            show = lambda d, keys=keys: ", ".join(f"{k}={str(d[k])[:12]}" for k in keys)  # noqa: E731
            return f"tile {i}: the seed and snapshot give {show(b)}, the manifest says {show(a)}"
    if want.packing.zones != got.packing.zones:
        return "zones differ"
    extra = sorted(set(want.clues) - set(got.clues))
    if extra:
        return f"clue {list(extra[0])} is not one the build adds ({len(extra)} extra clue(s))"
    if want.clues != got.clues:
        return "clues differ (the build adds other clues, or in another order)"
    for key in ("day", "seed_commit", "status"):
        if getattr(want, key) != getattr(got, key):
            return f"{key}: the replay's is {getattr(got, key)!r}, the manifest's {getattr(want, key)!r}"
    if dict(want.stats) != dict(got.stats):
        keys = sorted(set(want.stats) | set(got.stats))
        k = next(k for k in keys if want.stats.get(k) != got.stats.get(k))
        return f"stats.{k}: the replay's is {got.stats.get(k)!r}, the manifest's {want.stats.get(k)!r}"
    if want.packing != got.packing:
        return "packer or params differ"
    return "the manifest text differs from the replay's"


def replay(
    m: Manifest, seed: bytes, remote: str | None, *, workdir: Path | None = None, log=lambda line: None
) -> ReplayReport:
    """Rebuild the day of ``m`` from ``seed`` and its start snapshot on ``remote``; see the module doc."""
    from daily.build import BuildOptions, build
    from referee.manifest import load
    from remote.backend import open_backend
    from remote.snapshot import BASE, DELTA, fetch_verified
    from tilelib.merge import merge_file
    from tilelib.store import Library
    from trust.checks import mark_proven

    b = m.build or {}
    snap = b.get("snapshot")
    if snap is None:
        raise ReplayImpossible(
            "the manifest records no start snapshot (built without a remote, or before "
            "replays existed): it cannot be replayed"
        )
    why = version_mismatch(b.get("versions", {}))
    if why:
        raise ReplayImpossible(f"replay impossible here: the build ran with {why}; install those versions to replay it")
    if not remote:
        raise ReplayImpossible("--replay needs the remote that holds the start snapshot (--remote or TILES_REMOTE)")
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="tiles-replay-", dir=workdir))
    try:
        backend = open_backend(remote)
        got = fetch_verified(backend, snap, work, None, "quick", kind=BASE)
        lib = work / "library.sqlite"
        shutil.move(got, lib)
        deltas = list(b.get("deltas", []))
        with Library.open(lib) as into:
            for sha in deltas:
                d = fetch_verified(backend, sha, work, None, "quick", kind=DELTA)
                merge_file(into, d)
                d.unlink()
            mark_proven(into)  # proven part by part just now: the build checks its pages, not every row again
        log(f"fetched start state: snapshot {snap[:12]}… and {len(deltas)} delta(s)")
        p = m.packing
        opts = BuildOptions(
            day=m.day,
            library=lib,
            out_dir=work / "out",
            size=p.P + 1,
            packer=p.name,
            params=dict(p.params),
            seed=seed,
            remote=None,
            force=True,
            start={"snapshot": snap, "deltas": deltas},
            profile=None if m.difficulty is None else dict(m.difficulty),
            reuse=m.policy,
            play=m.play_rule,
        )
        res = build(opts, log=log)
        again = load(res.manifest_path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    diff = first_difference(m, again)
    if diff is not None:
        raise CheckFailed("replay", f"the board is not what the seed and snapshot {snap[:12]}… give: {diff}")
    return ReplayReport(snap, time.perf_counter() - t0)


__all__ = ["ReplayImpossible", "ReplayReport", "replay", "first_difference"]
