"""Catching up with HEAD (FORMAT §11): merge into the local file what the remote has and it has not.

Only new deltas when the base is already merged; else the newest sound base along HEAD's chain
(``remote.snapshot.fetch_good``) and its deltas. A bad delta stops the chain there and marks
HEAD bad; a bad base is healed around. Both ``pull`` and ``push`` (before publishing) use it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from remote.backend import Backend, ProgressFactory
from remote.delta import current_mark, ensure_sync_schema, pending, read_mark, write_mark
from remote.head import HeadInfo
from remote.snapshot import DELTA, BadSnapshot, Fetched, fetch_good, fetch_verified, strip_state
from remote.state import SyncState, write_state
from tilelib.db import atomic, connect
from tilelib.errors import HashMismatch
from tilelib.fsio import fsync_dir, fsync_file
from tilelib.merge import fingerprint, merge_file
from tilelib.store import Library

STALE_WORKDIR_SECONDS = 24 * 3600


def workdir(lib_path: Path) -> Path:
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


def _clone(tmp: Path, dest: Path) -> bool:
    """Make the verified base snapshot the new local library (no local file yet). False if one appeared
    meanwhile. ``fetch_verified`` proved the file's schema equal to the shipped one object by object
    before anything read it, so it is adopted (FORMAT §11), with every client's state stripped and a
    fresh library_id."""
    conn = connect(tmp)
    try:
        strip_state(conn)
        with atomic(conn):
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('library_id', ?)", (uuid.uuid4().hex,))
    finally:
        conn.close()
    fsync_file(tmp)
    try:
        os.link(tmp, dest)  # fails if dest exists: never clobber a library that appeared meanwhile
    except FileExistsError:
        return False
    fsync_dir(dest.parent)
    return True


@contextmanager
def _bad_rows_are_remote_errors(url: str):
    """A snapshot row whose content does not match its hash is bad remote data: RemoteError (exit 4)."""
    try:
        yield
    except HashMismatch as err:
        raise BadSnapshot(f"remote {url}: {err}") from err


def local_missing(path: Path) -> bool:
    return not path.exists() or path.stat().st_size == 0


@dataclass
class CatchUp:
    """What merging HEAD's state into the local file did."""

    lib: Library
    state: SyncState
    added: int = 0
    bytes: int = 0
    cloned: bool = False
    notes: list[str] = field(default_factory=list)
    conflicting: list = field(default_factory=list)  # MergeStats.conflicting of every merge, in order

    def note(self) -> str | None:
        return "; ".join(self.notes) or None


@dataclass(frozen=True)
class Fetching:
    """How a pull, or a push's catch-up, reads what the remote holds: ``progress`` bars for the
    downloads, ``verify`` the merge's check of the rows it takes in (``tilelib.merge``: "new" or
    "full"), ``integrity`` the check of each downloaded file's pages ("full" or "quick")."""

    progress: ProgressFactory | None = None
    verify: str = "new"
    integrity: str = "full"


FETCH_DEFAULT = Fetching()


def catch_up(
    lib: Library | None, path: Path, backend: Backend, info: HeadInfo, st: SyncState | None, work: Path, how: Fetching
) -> CatchUp:
    """Merge what HEAD has and this file has not: only new deltas when the base is already merged,
    else the (newest sound) base and its deltas. A bad delta stops the chain there (HEAD is then
    marked bad). Marks advance only when nothing local was waiting to be pushed."""
    url = str(backend.url)
    mark = read_mark(lib, url) if lib is not None else None
    waiting = lib is None or mark is None or pending(lib, mark)
    heads = tuple(d.sha for d in info.deltas)
    have_base = (
        st is not None and not st.head_bad and st.snapshot == info.snapshot and heads[: len(st.deltas)] == st.deltas
    )
    cu_added, nbytes, cloned, bad = 0, 0, False, False
    notes: list[str] = []
    conflicting: list = []  # MergeStats.conflicting rows
    if have_base:
        # a state is read from a file (none without one), and having the base needs a state
        assert st is not None and lib is not None
        base, merged, todo = info.snapshot, st.deltas, info.deltas[len(st.deltas) :]
    else:
        got = _fetch(backend, info, work, how)
        base, merged, todo = got.snapshot, (), info.deltas_of(got.snapshot)
        nbytes += got.path.stat().st_size
        note = got.note()
        if note:
            notes.append(note)
        bad = got.healed
        if lib is None and _clone(got.path, path):
            lib, cloned = Library.open(path), True
            cu_added = lib.count_tiles()
        else:
            lib = lib or Library.open(path, create=True)  # a file appeared (or was empty): merge instead
            with _bad_rows_are_remote_errors(url):
                ms = merge_file(lib, got.path, verify=how.verify)
            cu_added += ms.tiles_added
            conflicting += ms.conflicting
        ensure_sync_schema(lib.conn)
    for d in todo:
        try:
            p = fetch_verified(backend, d.sha, work, how.progress, how.integrity, d.size, kind=DELTA)
            with _bad_rows_are_remote_errors(url):
                ms = merge_file(lib, p, verify=how.verify)
            cu_added += ms.tiles_added
            conflicting += ms.conflicting
            p.unlink()
        except BadSnapshot as err:
            notes.append(
                f"HEAD's delta {d.sha[:12]}… is bad ({str(err).split(': ', 1)[-1]}); using the "
                f"{len(merged)} delta(s) before it"
            )
            bad = True
            break
        nbytes += d.size
        merged += (d.sha,)
    if cloned or not waiting:
        write_mark(lib.conn, url, current_mark(lib.conn), clear_touched=True)
    # the fingerprint stands for "the remote's content" only when the file holds nothing else
    fp = tuple(fingerprint(lib.conn)) if (cloned or not waiting) else ()
    state = SyncState(info.etag, info.snapshot, fp, base, merged, bad)
    write_state(lib.conn, url, state)
    return CatchUp(lib, state, cu_added, nbytes, cloned, notes, conflicting)


def _fetch(backend: Backend, info: HeadInfo, work: Path, how: Fetching) -> Fetched:
    return fetch_good(backend, info.chain(), info.size, work, how.progress, how.integrity)


__all__ = ["CatchUp", "STALE_WORKDIR_SECONDS", "catch_up", "local_missing", "workdir"]
