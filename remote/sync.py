"""Pull and push a tile library against a remote (SPEC §11): no row is ever lost.

Invariant: the snapshot HEAD names holds every row of every snapshot HEAD ever
named. Push keeps it by merging the HEAD it read (ETag E) into the local file
before snapshotting, and swapping HEAD only ``if_match=E``; a lost race means
someone else moved HEAD, so we read it again, merge it, re-snapshot, retry
(bounded exponential backoff with jitter). Pull downloads to a temp file, checks
size, sha256, ``PRAGMA integrity_check`` and that it is a tiles library, and
only then merges it (``tilelib.merge``, one transaction, local rows never
dropped): a bad snapshot leaves the local file byte-for-byte untouched.

Local bookkeeping lives in the library's ``meta`` table, per remote URL:
``remote_etag:<url>`` (the ETag of the last HEAD merged or written) and
``remote_state:<url>`` (JSON: etag, snapshot sha, fingerprint of that snapshot).
Since libraries only grow, "local fingerprint == remote snapshot fingerprint"
after merging means there is nothing to push. These keys are stripped from
snapshots before hashing, so a snapshot carries no one's sync state.
"""

from __future__ import annotations

import hashlib
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

from tilelib.errors import CorruptLibrary, HashMismatch, NotALibrary, RemoteError, SchemaTooNew
from tilelib.merge import MergeStats, check_source_schema, fingerprint, merge_file, verify_tiles
from tilelib.store import Library

from remote.backend import SHA_RE, Backend, Head, LostRace, ProgressFactory, SnapshotInfo

MAX_HEAD_BYTES = 64 * 1024
STATE_PREFIXES = ("remote_etag:", "remote_state:")


class BadHead(RemoteError):
    """HEAD.json exists but is not what SPEC §11 says it must be."""


class BadSnapshot(RemoteError):
    """A downloaded snapshot failed a check (size, sha256, integrity, not a library)."""


# ---------------------------------------------------------------- HEAD.json


@dataclass(frozen=True)
class HeadInfo:
    snapshot: str
    size: int
    tiles: int
    parent: str | None
    etag: str


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
    return HeadInfo(snap, doc["size"], doc["tiles"], parent, head.etag)


def head_body(snapshot: str, size: int, tiles: int, parent: str | None, library_id: str | None) -> bytes:
    """HEAD.json bytes. ``pushed_at`` and ``nonce`` make every HEAD body (hence ETag) unique."""
    doc = {"snapshot": snapshot, "size": size, "tiles": tiles, "parent": parent,
           "library_id": library_id, "pushed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "nonce": uuid.uuid4().hex}
    return (json.dumps(doc, indent=1) + "\n").encode()


# ---------------------------------------------------------------- local sync state


@dataclass(frozen=True)
class SyncState:
    etag: str
    snapshot: str
    fingerprint: tuple[int, ...]


def read_state(lib: Library, url: str) -> SyncState | None:
    row = lib.conn.execute("SELECT value FROM meta WHERE key = ?", (f"remote_state:{url}",)).fetchone()
    if row is None:
        return None
    try:
        d = json.loads(row[0])
        return SyncState(d["etag"], d["snapshot"], tuple(d["fingerprint"]))
    except (ValueError, KeyError, TypeError):
        return None  # unreadable bookkeeping only costs a re-merge


def write_state(conn: sqlite3.Connection, url: str, state: SyncState) -> None:
    doc = json.dumps({"etag": state.etag, "snapshot": state.snapshot, "fingerprint": list(state.fingerprint)})
    with conn:
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"remote_etag:{url}", state.etag))
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"remote_state:{url}", doc))


def _strip_state(conn: sqlite3.Connection) -> None:
    with conn:
        for p in STATE_PREFIXES:
            conn.execute("DELETE FROM meta WHERE substr(key, 1, ?) = ?", (len(p), p))


# ---------------------------------------------------------------- snapshots


def sha256_file(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def make_snapshot(lib: Library, workdir: Path) -> tuple[Path, str, int, int, tuple[int, ...]]:
    """VACUUM INTO a file in ``workdir``; return (path, sha256, size, tiles, fingerprint)."""
    out = workdir / "snapshot.sqlite"
    if lib.conn.in_transaction:
        lib.conn.commit()
    lib.conn.execute("VACUUM INTO ?", (str(out),))
    conn = sqlite3.connect(out)
    try:
        _strip_state(conn)
        tiles = conn.execute("SELECT count(*) FROM tiles").fetchone()[0]
        fp = tuple(fingerprint(conn))
    finally:
        conn.close()
    return out, sha256_file(out), out.stat().st_size, tiles, fp


def fetch_verified(backend: Backend, info: HeadInfo, workdir: Path, progress: ProgressFactory | None,
                   integrity: str = "full") -> Path:
    """Download HEAD's snapshot into ``workdir`` and prove it sound, else BadSnapshot. Returns its path.

    ``integrity="full"`` runs ``PRAGMA integrity_check`` as SPEC §11 says (it cross-checks
    every index and dominates pull time: ~1.5 s per 100 MB); ``"quick"`` runs
    ``PRAGMA quick_check`` (no index cross-check, ~20x faster). The sha256 check comes
    first either way, so "quick" only trusts the pusher's VACUUM INTO to build sound indexes."""
    if integrity not in ("full", "quick"):
        raise ValueError(f"integrity must be 'full' or 'quick', not {integrity!r}")
    dest = workdir / f"pull-{info.snapshot[:16]}.sqlite"
    short = info.snapshot[:12]
    size = backend.get_snapshot(info.snapshot, dest, progress)
    where = f"remote {backend.url}"
    if size != info.size:
        raise BadSnapshot(f"{where}: snapshot {short}… is {size} bytes but HEAD says {info.size}; refusing it")
    actual = sha256_file(dest)
    if actual != info.snapshot:
        raise BadSnapshot(f"{where}: snapshot {short}… fails its sha256 check (the bytes hash to "
                          f"{actual[:12]}…): it was altered or damaged; refusing it")
    try:
        conn = sqlite3.connect(f"file:{dest}?mode=ro", uri=True)
        try:
            # integrity_check cross-checks every index against its table: memory-mapping the
            # file and a large page cache make it ~1.8x faster (bench_sync).
            conn.execute(f"PRAGMA mmap_size = {1 << 31}")
            conn.execute("PRAGMA cache_size = -262144")
            pragma = "integrity_check" if integrity == "full" else "quick_check"
            res = [r[0] for r in conn.execute(f"PRAGMA {pragma}").fetchall()]
            if res != ["ok"]:
                raise BadSnapshot(f"{where}: snapshot {short}… fails PRAGMA {pragma}: {res[0]}")
            conn.execute("ATTACH DATABASE ? AS snap", (f"file:{dest}?mode=ro",))
            check_source_schema(conn, f"snapshot {short}…", "snap")
        finally:
            conn.close()
    except sqlite3.DatabaseError as err:
        raise BadSnapshot(f"{where}: snapshot {short}… is not a readable SQLite file ({err})") from None
    except (NotALibrary, CorruptLibrary) as err:
        raise BadSnapshot(f"{where}: {err}") from None
    except SchemaTooNew as err:
        raise SchemaTooNew(f"{where}: {err}; upgrade tiles to pull it") from None
    return dest


# ---------------------------------------------------------------- pull


@dataclass(frozen=True)
class PullResult:
    status: str            # "empty" | "up_to_date" | "cloned" | "merged"
    snapshot: str | None
    tiles_added: int
    bytes: int
    seconds: float
    merge: MergeStats | None = None


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


def _clone(tmp: Path, dest: Path, url: str, info: HeadInfo, verify: str) -> int | None:
    """Make the verified snapshot the new local library (no local file yet). None if one appeared meanwhile."""
    conn = sqlite3.connect(tmp)
    try:
        with _bad_rows_are_remote_errors(url):
            verify_tiles(conn, verify, f"snapshot {info.snapshot[:12]}…", "main", only_new=False)
        tiles = conn.execute("SELECT count(*) FROM tiles").fetchone()[0]
        _strip_state(conn)
        with conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('library_id', ?)", (uuid.uuid4().hex,))
        write_state(conn, url, SyncState(info.etag, info.snapshot, tuple(fingerprint(conn))))
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
        raise BadSnapshot(f"remote {url}: {err}") from None


def _local_missing(path: Path) -> bool:
    return not path.exists() or path.stat().st_size == 0


def pull(library: str | Path, backend: Backend, *, progress: ProgressFactory | None = None,
         verify: str = "new", integrity: str = "full") -> PullResult:
    """Merge the remote's HEAD snapshot into the local library (creating it if absent)."""
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
                return PullResult("up_to_date", info.snapshot, 0, 0, time.perf_counter() - t0)
        work = _workdir(path)
        try:
            tmp = fetch_verified(backend, info, work, progress, integrity)
            if lib is None:
                added = _clone(tmp, path, url, info, verify)
                if added is not None:
                    return PullResult("cloned", info.snapshot, added, info.size, time.perf_counter() - t0)
                lib = Library.open(path, create=True)  # a file appeared (or was empty): merge instead
            with _bad_rows_are_remote_errors(url):
                stats = merge_file(lib, tmp, verify=verify)
            write_state(lib.conn, url, SyncState(info.etag, info.snapshot, stats.source_fingerprint))
            return PullResult("merged", info.snapshot, stats.tiles_added, info.size,
                              time.perf_counter() - t0, stats)
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


def backoff(attempt: int, base: float = 0.05, cap: float = 2.0) -> float:
    """Seconds to wait after the ``attempt``-th lost race: exponential, capped, with jitter."""
    return min(cap, base * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5)


def push(library: str | Path, backend: Backend, *, progress: ProgressFactory | None = None,
         verify: str = "new", integrity: str = "full", max_attempts: int = 20,
         before_swap: Callable[[], None] | None = None,
         sleep: Callable[[float], None] = time.sleep) -> PushResult:
    """Publish the local library as the remote's new HEAD, merging whatever others pushed first.

    ``before_swap`` is called after the snapshot upload and before the HEAD swap
    (fault-injection point for tests)."""
    t0 = time.perf_counter()
    path = Path(library)
    url = str(backend.url)
    with Library.open(path) as lib:
        backend.prepare()
        library_id = lib.meta().get("library_id")
        merged = 0
        work = _workdir(path)
        try:
            for attempt in range(1, max_attempts + 1):
                head = backend.get_head()
                info = parse_head(head, url) if head is not None else None
                if info is not None:
                    st = read_state(lib, url)
                    if st is None or st.etag != info.etag or st.snapshot != info.snapshot:
                        tmp = fetch_verified(backend, info, work, progress, integrity)
                        with _bad_rows_are_remote_errors(url):
                            stats = merge_file(lib, tmp, verify=verify)
                        tmp.unlink()
                        merged += stats.tiles_added
                        st = SyncState(info.etag, info.snapshot, stats.source_fingerprint)
                        write_state(lib.conn, url, st)
                    if tuple(fingerprint(lib.conn)) == st.fingerprint:
                        return PushResult("up_to_date", info.snapshot, 0, merged, 0, attempt,
                                          time.perf_counter() - t0)
                snap, sha, size, tiles, fp = make_snapshot(lib, work)
                if info is not None and sha == info.snapshot:  # byte-identical to HEAD: nothing new
                    return PushResult("up_to_date", sha, 0, merged, 0, attempt, time.perf_counter() - t0)
                sent = backend.put_snapshot(sha, snap, progress)
                snap.unlink()
                if before_swap is not None:
                    before_swap()
                body = head_body(sha, size, tiles, info.snapshot if info else None, library_id)
                try:
                    etag = backend.put_head(body, info.etag if info else None)
                except LostRace:
                    sleep(backoff(attempt))
                    continue
                write_state(lib.conn, url, SyncState(etag, sha, fp))
                return PushResult("pushed", sha, tiles - (info.tiles if info else 0), merged,
                                  size if sent else 0, attempt, time.perf_counter() - t0)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    raise RemoteError(f"remote {url}: HEAD kept changing; gave up after {max_attempts} attempts "
                      f"(local rows merged so far are kept; run push again)")


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
           "fetch_verified", "read_state"]
