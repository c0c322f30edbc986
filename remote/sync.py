"""Pull and push a tile library against a remote (FORMAT §11): no row is ever lost, nothing corrupt is published.

Invariant: the snapshot HEAD names holds every row of every sound snapshot HEAD
ever named. Push keeps it by merging the HEAD it read (ETag E) into the local
file before snapshotting, and swapping HEAD only ``if_match=E``; a lost race
means someone else moved HEAD, so we read it again, merge it, re-snapshot, retry
(bounded exponential backoff with jitter).

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
import os
import random
import shutil
import sqlite3
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tilelib.checks import CheckReport, check_library, mark_verified, read_watermark
from tilelib.errors import CorruptLibrary, HashMismatch, RemoteError
from tilelib.merge import MergeStats, fingerprint, merge_file
from tilelib.store import Library

from remote.backend import SHA_RE, Backend, Head, LostRace, ProgressFactory, SnapshotInfo
from remote.snapshot import (BadSnapshot, Fetched, fetch_good, fetch_verified, make_snapshot, sha256_file,
                             strip_state)

MAX_HEAD_BYTES = 64 * 1024
HISTORY = 16          # ancestors a HEAD names besides its parent (the fallback chain)


class BadHead(RemoteError):
    """HEAD.json exists but is not what SPEC §11 says it must be."""


# ---------------------------------------------------------------- HEAD.json


@dataclass(frozen=True)
class HeadInfo:
    snapshot: str
    size: int
    tiles: int
    parent: str | None
    etag: str
    history: tuple[str, ...] = ()   # older ancestors, newest first (after ``parent``)

    def chain(self) -> list[str]:
        """HEAD's snapshot, its parent, then the recorded ancestors: the fallback order."""
        out: list[str] = []
        for sha in (self.snapshot, self.parent, *self.history):
            if sha and sha not in out:
                out.append(sha)
        return out


def parse_head(head: Head, where: str) -> HeadInfo:
    """Validate HEAD.json bytes; BadHead with the reason if anything is off."""
    def bad(why: str) -> BadHead:
        return BadHead(f"remote {where}: HEAD.json is malformed ({why}); refusing to use it")

    if len(head.body) > MAX_HEAD_BYTES:
        raise bad(f"{len(head.body)} bytes")
    try:
        doc = json.loads(head.body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise bad(f"not JSON: {err}") from None
    if not isinstance(doc, dict):
        raise bad("not a JSON object")
    snap, parent = doc.get("snapshot"), doc.get("parent")
    if not isinstance(snap, str) or not SHA_RE.match(snap):
        raise bad("'snapshot' must be a lower-case sha256 hex digest")
    if parent is not None and (not isinstance(parent, str) or not SHA_RE.match(parent)):
        raise bad("'parent' must be null or a sha256 hex digest")
    for key in ("size", "tiles"):
        v = doc.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise bad(f"{key!r} must be a non-negative integer")
    hist = doc.get("history", [])
    if not isinstance(hist, list) or len(hist) > 4 * HISTORY or \
            not all(isinstance(h, str) and SHA_RE.match(h) for h in hist):
        raise bad("'history' must be a list of sha256 hex digests")
    return HeadInfo(snap, doc["size"], doc["tiles"], parent, head.etag, tuple(hist))


def head_body(snapshot: str, size: int, tiles: int, parent: str | None, library_id: str | None,
              history: list[str] | tuple[str, ...] = ()) -> bytes:
    """HEAD.json bytes. ``pushed_at`` and ``nonce`` make every HEAD body (hence ETag) unique;
    ``history`` lists older ancestors (after ``parent``), newest first, so a client can fall back
    along the chain when HEAD's snapshot turns out bad."""
    doc = {"snapshot": snapshot, "size": size, "tiles": tiles, "parent": parent,
           "history": list(history)[:HISTORY],
           "library_id": library_id, "pushed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "nonce": uuid.uuid4().hex}
    return (json.dumps(doc, indent=1) + "\n").encode()


# ---------------------------------------------------------------- local sync state


@dataclass(frozen=True)
class SyncState:
    """What this file last merged from or wrote to a remote.

    ``snapshot`` is the snapshot HEAD named (ETag ``etag``); ``used`` the one actually
    merged, which differs when HEAD's was bad and the pull fell back (then a push must
    publish a good HEAD on top even with nothing new of its own)."""

    etag: str
    snapshot: str
    fingerprint: tuple[int, ...]
    used: str | None = None

    @property
    def head_bad(self) -> bool:
        return self.used is not None and self.used != self.snapshot


def read_state(lib: Library, url: str) -> SyncState | None:
    row = lib.conn.execute("SELECT value FROM meta WHERE key = ?", (f"remote_state:{url}",)).fetchone()
    if row is None:
        return None
    try:
        d = json.loads(row[0])
        return SyncState(d["etag"], d["snapshot"], tuple(d["fingerprint"]), d.get("used"))
    except (ValueError, KeyError, TypeError):
        return None  # unreadable bookkeeping only costs a re-merge


def write_state(conn: sqlite3.Connection, url: str, state: SyncState) -> None:
    doc = json.dumps({"etag": state.etag, "snapshot": state.snapshot, "fingerprint": list(state.fingerprint),
                      "used": state.used, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    with conn:
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"remote_etag:{url}", state.etag))
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"remote_state:{url}", doc))


# ---------------------------------------------------------------- the publish check


def check_before_publish(lib: Library, check: str = "new") -> CheckReport:
    """Prove the local file sound before any byte of it is published; CorruptLibrary (exit 3) if not.

    ``check="new"``: ``PRAGMA quick_check`` and the rows and manifests added since the last
    verified push (its cost follows what changed: bench_publish); everything when
    ``tilelib.checks.read_watermark`` cannot vouch for the older rows. ``"full"``: FORMAT §11's
    ``integrity_check``, every row re-hashed, every manifest parsed."""
    try:
        return check_library(lib, check)
    except CorruptLibrary as err:
        raise type(err)(f"push refused, the remote is untouched: {err}") from err


# ---------------------------------------------------------------- pull


@dataclass(frozen=True)
class PullResult:
    status: str            # "empty" | "up_to_date" | "cloned" | "merged"
    snapshot: str | None
    tiles_added: int
    bytes: int
    seconds: float
    merge: MergeStats | None = None
    note: str | None = None  # one line when HEAD's snapshot was bad and an earlier one was used


STALE_WORKDIR_SECONDS = 24 * 3600


def _workdir(lib_path: Path) -> Path:
    """A temp dir next to the library (same file system: renames are atomic, no /tmp size limits).

    Work dirs left by a killed pull/push are removed once they are a day old
    (younger ones may belong to a sync still running)."""
    lib_path.parent.mkdir(parents=True, exist_ok=True)
    for old in lib_path.parent.glob(".tiles-sync-*"):
        try:
            if time.time() - old.stat().st_mtime > STALE_WORKDIR_SECONDS:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass
    return Path(tempfile.mkdtemp(prefix=".tiles-sync-", dir=lib_path.parent))


def _clone(tmp: Path, dest: Path, url: str, info: HeadInfo, used: str) -> int | None:
    """Make the verified snapshot the new local library (no local file yet). None if one appeared meanwhile."""
    conn = sqlite3.connect(tmp)
    try:
        tiles = conn.execute("SELECT count(*) FROM tiles").fetchone()[0]
        strip_state(conn)
        with conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('library_id', ?)", (uuid.uuid4().hex,))
        write_state(conn, url, SyncState(info.etag, info.snapshot, tuple(fingerprint(conn)), used))
    finally:
        conn.close()
    try:
        os.link(tmp, dest)  # fails if dest exists: never clobber a library that appeared meanwhile
    except FileExistsError:
        return None
    return tiles


@contextmanager
def _bad_rows_are_remote_errors(url: str):
    """A snapshot row whose content does not match its hash is bad remote data: RemoteError (exit 4)."""
    try:
        yield
    except HashMismatch as err:
        raise BadSnapshot(f"remote {url}: {err}") from err


def _local_missing(path: Path) -> bool:
    return not path.exists() or path.stat().st_size == 0


def _fetch(backend: Backend, info: HeadInfo, work: Path, progress, integrity: str) -> Fetched:
    return fetch_good(backend, info.chain(), info.size, work, progress, integrity)


def pull(library: str | Path, backend: Backend, *, progress: ProgressFactory | None = None,
         verify: str = "new", integrity: str = "full") -> PullResult:
    """Merge the remote's HEAD snapshot into the local library (creating it if absent).

    When HEAD's snapshot fails its checks, the newest sound snapshot along HEAD's chain is
    merged instead (``PullResult.note`` says so) and HEAD is remembered as bad, so the next
    push publishes a good HEAD on top of it."""
    t0 = time.perf_counter()
    path = Path(library)
    url = str(backend.url)
    lib = None if _local_missing(path) else Library.open(path)
    try:
        head = backend.get_head()
        if head is None:
            return PullResult("empty", None, 0, 0, time.perf_counter() - t0)
        info = parse_head(head, url)
        if lib is not None:
            st = read_state(lib, url)
            if st is not None and st.etag == info.etag and st.snapshot == info.snapshot:
                note = (f"HEAD's snapshot {info.snapshot[:12]}… is bad; this file holds {st.used[:12]}… "
                        "(a push publishes a good HEAD)") if st.head_bad else None
                return PullResult("up_to_date", info.snapshot, 0, 0, time.perf_counter() - t0, note=note)
        work = _workdir(path)
        try:
            got = _fetch(backend, info, work, progress, integrity)
            if lib is None:
                added = _clone(got.path, path, url, info, got.snapshot)
                if added is not None:
                    return PullResult("cloned", got.snapshot, added, got.path.stat().st_size,
                                      time.perf_counter() - t0, note=got.note())
                lib = Library.open(path, create=True)  # a file appeared (or was empty): merge instead
            with _bad_rows_are_remote_errors(url):
                stats = merge_file(lib, got.path, verify=verify)
            write_state(lib.conn, url, SyncState(info.etag, info.snapshot, stats.source_fingerprint, got.snapshot))
            return PullResult("merged", got.snapshot, stats.tiles_added, got.path.stat().st_size,
                              time.perf_counter() - t0, stats, got.note())
        finally:
            shutil.rmtree(work, ignore_errors=True)
    finally:
        if lib is not None:
            lib.close()


# ---------------------------------------------------------------- push


@dataclass(frozen=True)
class PushResult:
    status: str            # "pushed" | "up_to_date"
    snapshot: str | None
    new_tiles: int         # tiles in the new HEAD snapshot that the previous HEAD lacked
    merged_tiles: int      # tiles merged from the remote into the local file on the way
    bytes: int             # bytes uploaded (0 if the snapshot already existed)
    attempts: int
    seconds: float
    note: str | None = None        # one line when HEAD's snapshot was bad and a good HEAD replaced it
    check: CheckReport | None = None


def backoff(attempt: int, base: float = 0.05, cap: float = 2.0) -> float:
    """Seconds to wait after the ``attempt``-th lost race: exponential, capped, with jitter."""
    return min(cap, base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5)


def push(library: str | Path, backend: Backend, *, progress: ProgressFactory | None = None,
         verify: str = "new", integrity: str = "full", check: str = "new", max_attempts: int = 20,
         before_swap: Callable[[], None] | None = None,
         sleep: Callable[[float], None] = time.sleep) -> PushResult:
    """Publish the local library as the remote's new HEAD, merging whatever others pushed first.

    First the local file must pass ``check_before_publish`` (exit 3, remote untouched). A HEAD
    whose snapshot is bad is replaced by one built on the newest sound snapshot before it.
    ``before_swap`` is called after the snapshot upload and before the HEAD swap
    (fault-injection point for tests)."""
    t0 = time.perf_counter()
    path = Path(library)
    url = str(backend.url)
    with Library.open(path) as lib:
        rep = check_before_publish(lib, check)
        backend.prepare()
        library_id = lib.meta().get("library_id")
        merged, note = 0, None
        work = _workdir(path)
        try:
            for attempt in range(1, max_attempts + 1):
                head = backend.get_head()
                info = parse_head(head, url) if head is not None else None
                base, history = None, []
                if info is not None:
                    st = read_state(lib, url)
                    if st is None or st.etag != info.etag or st.snapshot != info.snapshot:
                        got = _fetch(backend, info, work, progress, integrity)
                        with _bad_rows_are_remote_errors(url):
                            stats = merge_file(lib, got.path, verify=verify)
                        got.path.unlink()
                        merged += stats.tiles_added
                        st = SyncState(info.etag, info.snapshot, stats.source_fingerprint, got.snapshot)
                        write_state(lib.conn, url, st)
                    note = (f"HEAD's snapshot {info.snapshot[:12]}… was bad; published a good HEAD on "
                            f"{st.used[:12]}…") if st.head_bad else None
                    base = st.used or info.snapshot
                    chain = info.chain()
                    history = chain[chain.index(base) + 1:] if base in chain else []
                    if tuple(fingerprint(lib.conn)) == st.fingerprint and not st.head_bad:
                        mark_verified(lib, rep)
                        return PushResult("up_to_date", info.snapshot, 0, merged, 0, attempt,
                                          time.perf_counter() - t0, check=rep)
                snap, sha, size, tiles, fp = make_snapshot(lib, work)
                if info is not None and sha == info.snapshot:  # byte-identical to HEAD: nothing new
                    mark_verified(lib, rep)
                    return PushResult("up_to_date", sha, 0, merged, 0, attempt, time.perf_counter() - t0,
                                      check=rep)
                sent = backend.put_snapshot(sha, snap, progress)
                snap.unlink()
                if before_swap is not None:
                    before_swap()
                body = head_body(sha, size, tiles, base, library_id, history)
                try:
                    etag = backend.put_head(body, info.etag if info else None)
                except LostRace:
                    sleep(backoff(attempt))
                    continue
                write_state(lib.conn, url, SyncState(etag, sha, fp))
                mark_verified(lib, rep)
                return PushResult("pushed", sha, tiles - (info.tiles if info else 0), merged,
                                  size if sent else 0, attempt, time.perf_counter() - t0, note, rep)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    raise RemoteError(f"remote {url}: HEAD kept changing; gave up after {max_attempts} attempts "
                      f"(local rows merged so far are kept; run push again)")


# ---------------------------------------------------------------- status


@dataclass(frozen=True)
class SyncStatus:
    """Local file against the remote: what a push would add, whether a pull would bring anything."""

    url: str
    head: HeadInfo | None
    head_pushed_at: str | None
    synced_at: str | None          # when this file last merged from or wrote to the remote
    ahead_tiles: int
    ahead_manifests: int
    behind: bool                   # HEAD moved since this file last synced
    head_bad: bool
    last_day: str | None

    def line(self) -> str:
        if self.head is None:
            where = f"remote {self.url} is empty"
        else:
            where = f"remote {self.url}: HEAD {self.head.snapshot[:12]}… ({self.head.tiles:,} tiles" + \
                    (f", pushed {self.head_pushed_at})" if self.head_pushed_at else ")")
        if self.ahead_tiles or self.ahead_manifests:
            ahead = (f"local is ahead of remote by {self.ahead_tiles:,} tiles, {self.ahead_manifests} "
                     f"manifest{'s' if self.ahead_manifests != 1 else ''} (push)")
        else:
            ahead = "local has nothing the remote lacks"
        parts = [where, ahead, "behind: HEAD moved since the last sync (pull)" if self.behind else "not behind"]
        if self.head_bad:
            parts.append("HEAD's snapshot is bad (a push publishes a good HEAD)")
        parts.append(f"last built day {self.last_day or 'none'}; last sync {self.synced_at or 'never'}")
        return "; ".join(parts)


def status(library: str | Path, backend: Backend) -> SyncStatus:
    """Compare the local library with the remote without transferring a snapshot."""
    url = str(backend.url)
    head = backend.get_head()
    info = parse_head(head, url) if head is not None else None
    pushed_at = None
    if head is not None:
        try:
            pushed_at = json.loads(head.body).get("pushed_at")
        except ValueError:
            pass
    with Library.open(library) as lib:
        fp = fingerprint(lib.conn)
        st = read_state(lib, url)
        row = lib.conn.execute("SELECT value FROM meta WHERE key = ?", (f"remote_state:{url}",)).fetchone()
        synced = json.loads(row[0]).get("at") if row else None
        last = lib.conn.execute("SELECT max(day) FROM manifests").fetchone()[0]
    base = st.fingerprint if st is not None else (0, 0)
    return SyncStatus(url, info, pushed_at, synced, max(0, fp[0] - base[0]), max(0, fp[1] - base[1]),
                      info is not None and (st is None or st.etag != info.etag), bool(st and st.head_bad), last)


# ---------------------------------------------------------------- snapshots


def current_snapshot(backend: Backend) -> str | None:
    head = backend.get_head()
    return parse_head(head, str(backend.url)).snapshot if head is not None else None


def prune(backend: Backend, keep: int, min_age: float = 3600.0, now: float | None = None
          ) -> tuple[list[SnapshotInfo], list[SnapshotInfo]]:
    """Delete all but the ``keep`` newest snapshots; never HEAD's or its parent's, nor any younger than
    ``min_age`` seconds (a concurrent push may be about to point HEAD at it). Returns (deleted, kept)."""
    if keep < 0:
        raise ValueError("keep must be >= 0")
    now = time.time() if now is None else now
    head = backend.get_head()
    protect = set()
    if head is not None:
        info = parse_head(head, str(backend.url))
        protect = {info.snapshot, info.parent}
    snaps = backend.list_snapshots()
    newest = {s.sha for s in snaps[len(snaps) - keep:]} if keep else set()
    deleted, kept = [], []
    for s in snaps:
        if s.sha in newest or s.sha in protect or now - s.modified < min_age:
            kept.append(s)
        else:
            backend.delete_snapshot(s.sha)
            deleted.append(s)
    return deleted, kept


__all__ = ["BadHead", "BadSnapshot", "HeadInfo", "PullResult", "PushResult", "SyncState",
           "parse_head", "head_body", "pull", "push", "prune", "current_snapshot", "make_snapshot",
           "fetch_verified", "fetch_good", "sha256_file", "strip_state", "Fetched", "read_state", "check_before_publish", "read_watermark", "status", "SyncStatus"]
