"""Snapshots: make one to publish, fetch one and prove it sound, and fall back along HEAD's chain.

``make_snapshot`` is ``VACUUM INTO`` a work file with every client's sync state
stripped (a snapshot carries no one's bookkeeping), hashed and fingerprinted.

``fetch_verified`` is the one restore path: pull, push, heal and replay fetch every base snapshot
and every delta through it. It downloads one file and proves it sound before anything reads it:
size (when HEAD states it), sha256, a tiles library whose schema is exactly the one this code ships
for its version (``tilelib.schema``: an extra trigger, view or index is refused by name), ``PRAGMA
integrity_check`` (or ``quick_check``), its ``meta`` parsed strictly as ASCII (``meta_problem``),
every row audited and every stored manifest parsed (``trust.checks``), and that it is the kind
the caller named (a base snapshot, or a delta: FORMAT §11's ``kind`` = ``delta``). Any failure to
open, decode, prove or parse it is ``BadSnapshot``, so it is healed around like a corrupt page.

``fetch_good`` is how a poisoned remote heals (FORMAT §11): it tries HEAD's
snapshot, then its parent and the older ancestors HEAD lists, then any other
snapshot in the remote, newest first (at most ``MAX_FALLBACK``), and returns the
first that passes together with what it skipped and why. Pull merges that one
and remembers HEAD as bad; push publishes a good HEAD on top of it.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from remote.backend import Backend, ProgressFactory
from remote.delta import BASE, DELTA, kind_of
from tilelib.db import atomic, connect, outside
from tilelib.errors import BadInput, LibraryError, RemoteError, SchemaTooNew
from tilelib.merge import fingerprint
from tilelib.schema import check_schema
from tilelib.store import Library
from trust.checks import check_connection

STATE_PREFIXES = ("remote_etag:", "remote_state:", "remote_mark:", "verified:", "stock:")
MAX_FALLBACK = 32


class BadSnapshot(RemoteError):
    """A downloaded snapshot failed a check (size, sha256, integrity, not a library, a bad row)."""


def sha256_file(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def strip_state(conn: sqlite3.Connection) -> None:
    """Delete every client's sync bookkeeping from ``meta`` (snapshots carry none)."""
    with atomic(conn):
        for p in STATE_PREFIXES:
            conn.execute("DELETE FROM meta WHERE substr(key, 1, ?) = ?", (len(p), p))
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'misses_touched'").fetchone():
            conn.execute("DELETE FROM misses_touched")


def make_snapshot(lib: Library, workdir: Path) -> tuple[Path, str, int, int, tuple[int, ...]]:
    """VACUUM INTO a file in ``workdir``; return (path, sha256, size, tiles, fingerprint)."""
    out = workdir / "snapshot.sqlite"
    outside(lib.conn, "a snapshot (VACUUM INTO)")
    lib.conn.execute("VACUUM INTO ?", (str(out),))
    conn = connect(out)
    try:
        strip_state(conn)
        tiles = conn.execute("SELECT count(*) FROM tiles").fetchone()[0]
        fp = tuple(fingerprint(conn))
    finally:
        conn.close()
    return out, sha256_file(out), out.stat().st_size, tiles, fp


# What a failure to open, decode, prove or parse a fetched file can raise: each makes it unsound.
# A failure to download (RemoteError) or to write here (OSError) says nothing of the file and is raised.
_UNSOUND = (sqlite3.Error, LibraryError, BadInput, ValueError, TypeError, OverflowError, KeyError, IndexError)
_META_TEXT = re.compile(r"[\x20-\x7e]{1,2048}")  # printable ASCII: what a snapshot's meta keys and values are
_LIBRARY_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


def meta_problem(conn: sqlite3.Connection) -> str | None:
    """Why a fetched file's ``meta`` is not a snapshot's, or None (FORMAT §11): every key and value
    printable ASCII text; ``schema_version`` (proven by the schema check), ``library_id`` an id, ``kind``
    absent or ``delta``; every other key per-client state (``STATE_PREFIXES``: its value any text,
    never read here, and stripped on a clone). Anything else — a bundle's kind, an unknown key, a
    number or a blob, a byte past ASCII — is not what ``make_snapshot`` or a delta writes."""
    for key, value in conn.execute("SELECT key, value FROM meta ORDER BY key"):
        if not isinstance(key, str) or not _META_TEXT.fullmatch(key):
            return f"a meta key {str(key)[:40]!r} is not printable ASCII text"
        if key.startswith(STATE_PREFIXES):  # another client's bookkeeping: never read, stripped on a clone
            if not isinstance(value, str):
                return f"meta {key[:40]} holds a {type(value).__name__}, not text"
            continue
        if not isinstance(value, str) or not _META_TEXT.fullmatch(value):
            return f"meta {key} holds {str(value)[:40]!r}, not printable ASCII text"
        if key == "library_id" and not _LIBRARY_ID.fullmatch(value):
            return f"meta library_id {value!r} is not an id"
        if key == "kind" and value != DELTA:
            return f"meta kind {value!r} is not a snapshot's (a delta's is {DELTA!r}, a base has none)"
        if key not in ("schema_version", "library_id", "kind"):
            return f"meta key {key[:40]!r} is not one a snapshot holds"
    return None


def fetch_verified(
    backend: Backend,
    sha: str,
    workdir: Path,
    progress: ProgressFactory | None,
    integrity: str = "full",
    size: int | None = None,
    *,
    kind: str,
) -> Path:
    """Download snapshot ``sha`` into ``workdir`` and prove it a sound ``kind`` (BASE or DELTA),
    else BadSnapshot. Returns its path.

    ``integrity="full"`` runs ``PRAGMA integrity_check`` as FORMAT §11 says (it cross-checks
    every index and dominates pull time: ~1.5 s per 100 MB); ``"quick"`` runs
    ``PRAGMA quick_check``. Every row is audited and every stored manifest parsed either way
    (``trust.checks``): a snapshot is only ever merged whole, so it is proven whole. Any failure to
    open, decode, prove or parse it (its header, its text encoding, its schema, its ``meta``, a
    row) makes it unsound, so a pull falls back past it (``fetch_good``) as for a corrupt page."""
    if integrity not in ("full", "quick"):
        raise ValueError(f"integrity must be 'full' or 'quick', not {integrity!r}")
    if kind not in (BASE, DELTA):
        raise ValueError(f"kind must be {BASE!r} or {DELTA!r}, not {kind!r}")
    dest = workdir / f"pull-{sha[:16]}.sqlite"
    short = sha[:12]
    where = f"remote {backend.url}"
    got = backend.get_snapshot(sha, dest, progress)
    try:
        if size is not None and got != size:
            raise BadSnapshot(f"{where}: snapshot {short}… is {got} bytes but HEAD says {size}; refusing it")
        actual = sha256_file(dest)
        if actual != sha:
            raise BadSnapshot(
                f"{where}: snapshot {short}… fails its sha256 check (the bytes hash to "
                f"{actual[:12]}…): it was altered or damaged; refusing it"
            )
        _prove(dest, short, where, kind, integrity)
    except SchemaTooNew as err:
        dest.unlink(missing_ok=True)
        raise SchemaTooNew(f"{where}: {err}; upgrade tiles to pull it") from err
    except BadSnapshot:
        dest.unlink(missing_ok=True)
        raise
    except sqlite3.DatabaseError as err:
        dest.unlink(missing_ok=True)
        raise BadSnapshot(f"{where}: snapshot {short}… is not a readable SQLite file ({err})") from err
    except _UNSOUND as err:
        dest.unlink(missing_ok=True)
        raise BadSnapshot(f"{where}: {_said(err, short)}") from err
    return dest


def _said(err: BaseException, short: str) -> str:
    """A failure's one line, naming the snapshot when the failure does not."""
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return text if short in text else f"snapshot {short}… cannot be read as a library ({text})"


def _prove(path: Path, short: str, where: str, kind: str, integrity: str) -> None:
    """The checks of a downloaded file, in FORMAT §11's order: schema (before ``meta`` is read: it may
    not be a table), ``meta``, kind (before the rows: a wrong kind is refused unread), then pages, rows,
    manifests, spent and misses (``trust.checks.check_connection``)."""
    label = f"snapshot {short}…"
    conn = connect(path, readonly=True)
    try:
        # integrity_check cross-checks every index against its table: memory-mapping the
        # file and a large page cache make it ~1.8x faster (bench_sync).
        conn.execute(f"PRAGMA mmap_size = {1 << 31}")
        conn.execute("PRAGMA cache_size = -262144")
        check_schema(conn, label)
        why = meta_problem(conn)
        if why is not None:
            raise BadSnapshot(f"{where}: {label} is not a snapshot: {why}; refusing it")
        got_kind = kind_of(conn)
        if got_kind != kind:
            raise BadSnapshot(
                f"{where}: {short}… is a {_KIND_WORDS[got_kind]} where a {_KIND_WORDS[kind]} was named; refusing it"
            )
        check_connection(conn, label, integrity=integrity)
    finally:
        conn.close()


_KIND_WORDS = {BASE: "base snapshot", DELTA: "delta"}


@dataclass(frozen=True)
class Fetched:
    """The snapshot a pull or push will merge: HEAD's own, or the newest sound one before it."""

    head: str  # the snapshot HEAD names
    snapshot: str  # the snapshot fetched and proven sound
    path: Path
    skipped: tuple[tuple[str, str], ...] = ()  # (sha, why) of snapshots that failed, newest first

    @property
    def healed(self) -> bool:
        return self.snapshot != self.head

    def note(self) -> str | None:
        """The one line that says a fallback happened, or None."""
        if not self.healed:
            return None
        why = self.skipped[0][1] if self.skipped else "it failed its checks"
        return (
            f"HEAD's snapshot {self.head[:12]}… is bad ({why}); using {self.snapshot[:12]}…, "
            f"{len(self.skipped)} snapshot(s) back"
        )


def fallback_order(backend: Backend, chain: list[str]) -> list[str]:
    """HEAD's chain first, then every other snapshot the remote lists, newest first; at most MAX_FALLBACK."""
    out = list(dict.fromkeys(chain))
    try:
        listed = backend.list_snapshots()
    except RemoteError:
        listed = []
    for s in sorted(listed, key=lambda s: s.modified, reverse=True):
        if s.sha not in out:
            out.append(s.sha)
    return out[:MAX_FALLBACK]


def fetch_good(
    backend: Backend,
    chain: list[str],
    head_size: int | None,
    workdir: Path,
    progress: ProgressFactory | None,
    integrity: str = "full",
) -> Fetched:
    """Fetch the newest sound snapshot along ``chain`` (HEAD's snapshot first); BadSnapshot if none is."""
    head = chain[0]
    skipped: list[tuple[str, str]] = []
    first_err: BadSnapshot | None = None
    order = [head] + [s for s in fallback_order(backend, chain) if s != head]
    for i, sha in enumerate(order):
        try:
            path = fetch_verified(backend, sha, workdir, progress, integrity, head_size if i == 0 else None, kind=BASE)
        except BadSnapshot as err:
            first_err = first_err or err
            skipped.append((sha, str(err).split(": ", 1)[-1]))
            continue
        except RemoteError as err:  # e.g. an ancestor already pruned
            if i == 0:
                raise
            skipped.append((sha, str(err)))
            continue
        return Fetched(head, sha, path, tuple(skipped))
    assert first_err is not None
    raise BadSnapshot(f"{first_err}; and none of the {len(order) - 1} earlier snapshot(s) passes either")


__all__ = [
    "BASE",
    "DELTA",
    "BadSnapshot",
    "Fetched",
    "MAX_FALLBACK",
    "STATE_PREFIXES",
    "fetch_good",
    "fetch_verified",
    "fallback_order",
    "make_snapshot",
    "meta_problem",
    "sha256_file",
    "strip_state",
]
