"""Pull and push a tile library against a remote (FORMAT §11): no row is ever lost, nothing corrupt is published.

Invariant: the state HEAD names (a base snapshot plus the deltas on top of it,
``remote.head``) holds every row of every sound state HEAD ever named. Push keeps it by merging the HEAD it read (ETag
E) into the local
file before snapshotting, and swapping HEAD only ``if_match=E``; a lost race
means someone else moved HEAD, so we read it again, merge it, re-snapshot, retry
(bounded exponential backoff with jitter). A push sends only what the remote
lacks, as a delta (``remote.delta``), and a pull fetches only the deltas it has
not merged; every ``MAX_DELTAS`` deltas (or when they reach a quarter of the
base) a push compacts them into a full snapshot.

Nothing corrupt leaves the machine: before any byte is published the local file
passes ``check_before_publish`` (pages, rows, stored manifests; exit 3 naming
the first bad row, remote untouched). Pull proves a downloaded snapshot whole
(``remote.snapshot.fetch_verified``) before merging it (``tilelib.merge``, one
transaction, local rows never dropped). A poisoned remote heals: when HEAD's
snapshot fails, pull and push fall back along HEAD's chain to the newest sound
snapshot and say so in one line, and push publishes a good HEAD on top.

Local bookkeeping lives in the library's ``meta`` table, per remote URL:
``remote_etag:<url>`` (the ETag of the last HEAD merged or written),
``remote_state:<url>`` (JSON: etag, snapshot sha, fingerprint of that snapshot,
and the snapshot actually used when HEAD's was bad) and ``verified:rowids``
(how far the last push's check reached). Since libraries only grow, "local
fingerprint == remote snapshot fingerprint" after merging means there is
nothing to push. These keys are stripped from snapshots before hashing, so a
snapshot carries no one's sync state.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from remote.backend import Backend, LostRace, SnapshotInfo
from remote.catchup import FETCH_DEFAULT, STALE_WORKDIR_SECONDS, Fetching, catch_up, local_missing, workdir
from remote.delta import (
    COMPACT_FRACTION,
    COMPACT_MIN_BYTES,
    MAX_DELTAS,
    Mark,
    current_mark,
    ensure_sync_schema,
    make_delta,
    pending,
    read_mark,
    write_mark,
)
from remote.fair import refuse_lost_boards
from remote.head import BadHead, DeltaRef, HeadInfo, head_body, parse_head, provenance
from remote.snapshot import BadSnapshot, Fetched, fetch_good, fetch_verified, make_snapshot, sha256_file, strip_state
from remote.state import SyncState, ahead, read_state, write_state
from tilelib.errors import CorruptLibrary, RemoteError
from tilelib.fsio import refuse_symlink
from tilelib.merge import fingerprint
from tilelib.spent import count as spent_count
from tilelib.store import Library
from trust.checks import CheckReport, check_file, check_library, mark_verified, read_watermark

# ---------------------------------------------------------------- the publish check


@contextmanager
def _refused():
    """A failed publish check is re-raised as itself, saying that nothing was published."""
    try:
        yield
    except CorruptLibrary as err:
        raise type(err)(f"push refused, the remote is untouched: {err}") from err


def check_before_publish(lib: Library, check: str = "new") -> CheckReport:
    """Prove the local file sound before any byte of it is published; CorruptLibrary (exit 3) if not.

    ``check="new"``: ``PRAGMA quick_check`` and the rows and manifests added since the last
    verified push (its cost follows what changed: bench_publish); everything when
    ``trust.checks.read_watermark`` cannot vouch for the older rows. ``"since"``: the same without
    widening to everything on a small library, for the nightly build's push (its check stage proved
    the whole file minutes before, in the same process). ``"full"``: FORMAT §11's
    ``integrity_check``, every row re-hashed, every manifest parsed. A delta is checked whole
    again before it is uploaded (``_push_delta``)."""
    with _refused():
        return check_library(lib, check)


# ---------------------------------------------------------------- pull


@dataclass(frozen=True)
class PullResult:
    status: str  # "empty" | "up_to_date" | "cloned" | "merged"
    snapshot: str | None  # the base merged (HEAD's, or the sound one a fallback found)
    tiles_added: int
    bytes: int  # bytes downloaded
    seconds: float
    note: str | None = None  # one line when HEAD's base or a delta was bad and an earlier state was used


def pull(
    library: str | Path,
    backend: Backend,
    how: Fetching = FETCH_DEFAULT,
) -> PullResult:
    """Merge the remote's state into the local library (creating it if absent): only the deltas it
    lacks when its base is current. A bad HEAD is healed around (``PullResult.note`` says how) and
    remembered, so the next push publishes a good HEAD on top of it."""
    t0 = time.perf_counter()
    path = Path(library)
    url = str(backend.url)
    missing = local_missing(path)
    if missing:
        refuse_symlink(path, "library path")  # a pull would make the library at the link's target
    lib = None if missing else Library.open(path)
    try:
        head = backend.get_head()
        if head is None:
            return PullResult("empty", None, 0, 0, time.perf_counter() - t0)
        info = parse_head(head, url)
        st = read_state(lib, url) if lib is not None else None
        if st is not None and st.synced_with(info):
            note = (
                (
                    f"HEAD on the remote is bad; this file holds the sound state before it (base "
                    f"{(st.used or st.snapshot)[:12]}…, {len(st.deltas)} delta(s)); a push publishes a good "
                    "HEAD"
                )
                if st.head_bad
                else None
            )
            return PullResult("up_to_date", st.used or info.snapshot, 0, 0, time.perf_counter() - t0, note=note)
        work = workdir(path)
        try:
            cu = catch_up(lib, path, backend, info, st, work, how)
            lib = cu.lib
            return PullResult(
                "cloned" if cu.cloned else "merged",
                cu.state.used,
                cu.added,
                cu.bytes,
                time.perf_counter() - t0,
                note=cu.note(),
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)
    finally:
        if lib is not None:
            lib.close()


# ---------------------------------------------------------------- push


@dataclass(frozen=True)
class PushResult:
    status: str  # "pushed" | "up_to_date"
    snapshot: str | None  # the object uploaded (a delta or a full snapshot), or HEAD's base
    new_tiles: int  # tiles the new HEAD has that the previous HEAD lacked
    merged_tiles: int  # tiles merged from the remote into the local file on the way
    bytes: int  # bytes uploaded (0 if the object already existed)
    attempts: int
    seconds: float
    note: str | None = None  # one line when HEAD was bad and a good HEAD replaced it
    check: CheckReport | None = None
    kind: str = "snapshot"  # "delta" or "snapshot" (a full one: first push, compaction, healing)


def backoff(attempt: int, base: float = 0.05, cap: float = 2.0) -> float:
    """Seconds to wait after the ``attempt``-th lost race: exponential, capped, with jitter."""
    return min(cap, base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5)


def _compact(info: HeadInfo | None, mark: Mark | None, st: SyncState | None) -> bool:
    """Whether this push must write a full snapshot instead of a delta."""
    big = info is not None and info.delta_bytes >= max(COMPACT_MIN_BYTES, COMPACT_FRACTION * info.size)
    return info is None or mark is None or st is None or st.head_bad or len(info.deltas) >= MAX_DELTAS or big


def push(
    library: str | Path,
    backend: Backend,
    how: Fetching = FETCH_DEFAULT,
    *,
    check: str = "new",
    max_attempts: int = 20,
    before_swap: Callable[[], None] | None = None,
    compact: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> PushResult:
    """Publish the local library on the remote, merging whatever others pushed first.

    First the local file must pass ``check_before_publish`` (exit 3, remote untouched). Then only
    what the remote lacks is uploaded, as a delta checked whole; a full snapshot is written for the
    first push, every ``MAX_DELTAS`` deltas, when ``compact`` is asked, and to replace a bad HEAD.
    ``before_swap`` is called after the upload and before the HEAD swap (fault injection for tests)."""
    t0 = time.perf_counter()
    path = Path(library)
    url = str(backend.url)
    with Library.open(path) as lib:
        rep = check_before_publish(lib, check)
        backend.prepare()
        library_id = lib.meta().get("library_id")
        merged, notes = 0, []
        work = workdir(path)
        try:
            for attempt in range(1, max_attempts + 1):
                head = backend.get_head()
                info = parse_head(head, url) if head is not None else None
                st = read_state(lib, url)
                conflicting: list = []
                if info is not None:
                    if st is None or not st.synced_with(info):
                        cu = catch_up(lib, path, backend, info, st, work, how)
                        st, merged, conflicting = cu.state, merged + cu.added, cu.conflicting
                        notes += [n for n in cu.notes if n not in notes]
                    elif st.head_bad and not notes:
                        notes.append("HEAD on the remote was bad (this file holds the sound state before it)")
                mark = read_mark(lib, url)
                # a fresh board that another machine's push beat is withdrawn, and nothing is sent
                refuse_lost_boards(lib, mark.manifests if mark is not None else 0, conflicting)
                # with a HEAD there is a state: read (synced with it) or just written by the catch-up
                if info is not None and st is not None and not st.head_bad:
                    legacy_same = mark is None and tuple(fingerprint(lib.conn)) == st.fingerprint
                    if (mark is not None and not pending(lib, mark)) or legacy_same:
                        if legacy_same:
                            write_mark(lib.conn, url, current_mark(lib.conn), clear_touched=True)
                        mark_verified(lib, rep)
                        return PushResult(
                            "up_to_date", info.snapshot, 0, merged, 0, attempt, time.perf_counter() - t0, check=rep
                        )
                if compact or _compact(info, mark, st):
                    res = _push_full(lib, backend, info, st, work, how.progress, library_id, before_swap)
                else:
                    assert info is not None and st is not None and mark is not None  # else _compact is True
                    res = _push_delta(lib, backend, info, st, mark, work, how.progress, library_id, before_swap)
                if res is None:  # lost the race: someone moved HEAD
                    sleep(backoff(attempt))
                    continue
                mark_verified(lib, rep)
                sha, sent, new_tiles, kind = res
                note = ("; ".join(notes) + "; published a good HEAD on top") if notes else None
                return PushResult(
                    "pushed", sha, new_tiles, merged, sent, attempt, time.perf_counter() - t0, note, rep, kind
                )
        finally:
            shutil.rmtree(work, ignore_errors=True)
    raise RemoteError(
        f"remote {url}: HEAD kept changing; gave up after {max_attempts} attempts "
        f"(local rows merged so far are kept; run push again)"
    )


def _swap(
    lib: Library, backend: Backend, info: HeadInfo | None, body: bytes, state: SyncState, reach: Mark, before_swap
) -> bool:
    if before_swap is not None:
        before_swap()
    try:
        etag = backend.put_head(body, info.etag if info else None)
    except LostRace:
        return False
    url = str(backend.url)
    write_state(lib.conn, url, SyncState(etag, state.snapshot, state.fingerprint, state.used, state.deltas))
    write_mark(lib.conn, url, reach, clear_touched=True)
    ensure_sync_schema(lib.conn)  # from now on misses updates are tracked for the next delta
    return True


def _push_delta(lib, backend, info: HeadInfo, st: SyncState, mark: Mark, work, progress, library_id, before_swap):
    """Upload the rows past ``mark`` as one delta on top of HEAD's state; None if the race was lost."""
    dpath, reach, _, _ = make_delta(lib, mark, work)
    with _refused():
        check_file(dpath, integrity="full")
    sha, size = sha256_file(dpath), dpath.stat().st_size
    sent = backend.put_snapshot(sha, dpath, progress)
    dpath.unlink()
    deltas = info.deltas + (DeltaRef(sha, size),)
    tiles = lib.count_tiles()
    body = head_body(info.snapshot, info.size, tiles, info.parent, library_id, info.history, deltas, info.parent_deltas)
    state = SyncState("", info.snapshot, tuple(fingerprint(lib.conn)), info.snapshot, tuple(d.sha for d in deltas))
    if not _swap(lib, backend, info, body, state, reach, before_swap):
        return None
    return sha, (size if sent else 0), tiles - info.tiles, "delta"


def _push_full(lib, backend, info: HeadInfo | None, st: SyncState | None, work, progress, library_id, before_swap):
    """Upload a full snapshot as the new base; None if the race was lost."""
    reach = current_mark(lib.conn)
    snap, sha, size, tiles, fp = make_snapshot(lib, work)
    sent = backend.put_snapshot(sha, snap, progress)
    snap.unlink()
    parent, history = None, []
    parent_deltas: tuple[DeltaRef, ...] = ()
    if info is not None:
        parent = (st.used if st is not None and st.used else None) or info.snapshot
        merged = set(st.deltas) if st is not None else set()
        parent_deltas = tuple(d for d in info.deltas_of(parent) if d.sha in merged)
        chain = info.chain()
        history = chain[chain.index(parent) + 1 :] if parent in chain else []
    body = head_body(sha, size, tiles, parent, library_id, history, (), parent_deltas)
    if not _swap(lib, backend, info, body, SyncState("", sha, fp, sha, ()), reach, before_swap):
        return None
    return sha, (size if sent else 0), max(0, tiles - (info.tiles if info else 0)), "snapshot"


# ---------------------------------------------------------------- status


@dataclass(frozen=True)
class SyncStatus:
    """Local file against the remote: what a push would add, whether a pull would bring anything."""

    url: str
    head: HeadInfo | None
    head_pushed_at: str | None
    synced_at: str | None  # when this file last merged from or wrote to the remote
    ahead_tiles: int
    ahead_manifests: int
    behind: bool  # HEAD moved since this file last synced
    head_bad: bool
    last_day: str | None
    spent: int = 0  # solutions the local file holds as spent (the fair rule)
    ahead_spent: int = 0  # spent rows a push would add

    def line(self) -> str:
        if self.head is None:
            where = f"remote {self.url} is empty"
        else:
            where = f"remote {self.url}: HEAD {self.head.snapshot[:12]}… ({self.head.tiles:,} tiles" + (
                f", pushed {self.head_pushed_at})" if self.head_pushed_at else ")"
            )
        if self.ahead_tiles or self.ahead_manifests:
            ahead = (
                f"local is ahead of remote by {self.ahead_tiles:,} tiles, {self.ahead_manifests} "
                f"manifest{'s' if self.ahead_manifests != 1 else ''} (push)"
            )
        else:
            ahead = "local has nothing the remote lacks"
        parts = [where, ahead, "behind: HEAD moved since the last sync (pull)" if self.behind else "not behind"]
        if self.head_bad:
            parts.append("HEAD's snapshot is bad (a push publishes a good HEAD)")
        parts.append(f"{self.spent:,} spent solutions ({self.ahead_spent:,} spent rows to push)")
        parts.append(f"last built day {self.last_day or 'none'}; last sync {self.synced_at or 'never'}")
        return "; ".join(parts)


def status(library: str | Path, backend: Backend) -> SyncStatus:
    """Compare the local library with the remote without transferring a snapshot."""
    url = str(backend.url)
    head = backend.get_head()
    info = parse_head(head, url) if head is not None else None
    pushed_at = provenance(head)[0] if head is not None else None
    with Library.open(library) as lib:
        st = read_state(lib, url)
        mark = read_mark(lib, url)
        row = lib.conn.execute("SELECT value FROM meta WHERE key = ?", (f"remote_state:{url}",)).fetchone()
        synced = json.loads(row[0]).get("at") if row else None
        last = lib.conn.execute("SELECT max(day) FROM manifests").fetchone()[0]
        spent_rows, spent_sols = spent_count(lib.conn)
        ahead_s = spent_rows
        if mark is not None:
            q = lib.conn.execute
            ahead_t = q("SELECT count(*) FROM tiles WHERE rowid > ?", (mark.tiles,)).fetchone()[0]
            ahead_m = q("SELECT count(*) FROM manifests WHERE rowid > ?", (mark.manifests,)).fetchone()[0]
            ahead_s = q("SELECT count(*) FROM spent WHERE rowid > ?", (mark.spent,)).fetchone()[0] if spent_rows else 0
        else:
            fp = fingerprint(lib.conn)
            base = st.fingerprint if st is not None else (0, 0)
            ahead_t, ahead_m = max(0, fp[0] - base[0]), max(0, fp[1] - base[1])
    return SyncStatus(
        url,
        info,
        pushed_at,
        synced,
        ahead_t,
        ahead_m,
        info is not None and (st is None or st.etag != info.etag),
        bool(st and st.head_bad),
        last,
        spent_sols,
        ahead_s,
    )


# ---------------------------------------------------------------- snapshots


def current_snapshot(backend: Backend) -> str | None:
    head = backend.get_head()
    return parse_head(head, str(backend.url)).snapshot if head is not None else None


def start_states(conn) -> frozenset[str]:
    """Every snapshot and delta a stored day's manifest names as the state its build started from
    (FORMAT §13's ``build``): what that day's replay fetches. Read by SQLite's own JSON reader from
    the stored manifests (each proved by the library's checks); a manifest without ``build`` names
    nothing."""
    named: set[str] = set()
    rows = conn.execute(
        "SELECT json_extract(json, '$.build.snapshot'), json_extract(json, '$.build.deltas') FROM manifests"
    )
    for snapshot, deltas in rows:
        named |= {snapshot} if isinstance(snapshot, str) else set()
        named |= {d for d in json.loads(deltas) if isinstance(d, str)} if isinstance(deltas, str) else set()
    return frozenset(named)


def prune_keeping_replays(
    library: str | Path, backend: Backend, keep: int, min_age: float = 3600.0
) -> tuple[list[SnapshotInfo], list[SnapshotInfo], frozenset[str]]:
    """``prune`` that keeps every state a stored day's replay starts from: ``library`` is pulled first
    so it holds every day the remote holds, and its manifests name those states. Returns (deleted,
    kept, the states the stored days name)."""
    named: frozenset[str] = frozenset()
    if pull(library, backend).status != "empty":
        with Library.open(library) as lib:
            named = start_states(lib.conn)
    deleted, kept = prune(backend, keep, min_age, replayable=named)
    return deleted, kept, named


def prune(
    backend: Backend,
    keep: int,
    min_age: float = 3600.0,
    now: float | None = None,
    replayable: frozenset[str] = frozenset(),
) -> tuple[list[SnapshotInfo], list[SnapshotInfo]]:
    """Delete all but the ``keep`` newest snapshots (deltas count as snapshots); never HEAD's base, its
    deltas, its parent or the parent's deltas, nor any younger than ``min_age`` seconds (a concurrent
    push may be about to point HEAD at it), nor any in ``replayable`` (``start_states``: a stored
    day's replay needs it). Returns (deleted, kept)."""
    if keep < 0:
        raise ValueError("keep must be >= 0")
    now = time.time() if now is None else now
    head = backend.get_head()
    protect: set[str | None] = set(replayable)
    if head is not None:
        info = parse_head(head, str(backend.url))
        protect |= {info.snapshot, info.parent, *(d.sha for d in info.deltas + info.parent_deltas)}
    snaps = backend.list_snapshots()
    newest = {s.sha for s in snaps[len(snaps) - keep :]} if keep else set()
    deleted, kept = [], []
    for s in snaps:
        if s.sha in newest or s.sha in protect or now - s.modified < min_age:
            kept.append(s)
        else:
            backend.delete_snapshot(s.sha)
            deleted.append(s)
    return deleted, kept


__all__ = [
    "BadHead",
    "BadSnapshot",
    "Fetching",
    "HeadInfo",
    "PullResult",
    "PushResult",
    "SyncState",
    "SyncStatus",
    "parse_head",
    "head_body",
    "pull",
    "push",
    "prune",
    "prune_keeping_replays",
    "start_states",
    "current_snapshot",
    "make_snapshot",
    "fetch_verified",
    "fetch_good",
    "sha256_file",
    "strip_state",
    "Fetched",
    "read_state",
    "ahead",
    "check_before_publish",
    "read_watermark",
    "status",
    "STALE_WORKDIR_SECONDS",
    "write_state",
]
