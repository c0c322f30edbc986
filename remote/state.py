"""This file's sync bookkeeping per remote (FORMAT §11): what it last merged or wrote, and whether a
push would publish anything. Kept in ``meta`` under ``remote_state:<url>`` / ``remote_etag:<url>``
(stripped from every snapshot); the rows a push must send are marked by ``remote.delta``."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass

from remote.delta import pending, read_mark
from tilelib.db import atomic
from tilelib.merge import fingerprint
from tilelib.store import Library


@dataclass(frozen=True)
class SyncState:
    """What this file last merged from or wrote to a remote.

    ``snapshot`` is the base HEAD named (ETag ``etag``) and ``deltas`` the shas of its deltas
    merged so far; ``used`` is the base actually merged, which differs when HEAD's was bad and
    the pull fell back, and ``bad`` says a delta of HEAD failed. Either way a push must publish a
    good HEAD (a full snapshot) even with nothing new of its own. ``fingerprint`` is kept for files
    synced before deltas existed."""

    etag: str
    snapshot: str
    fingerprint: tuple[int, ...]
    used: str | None = None
    deltas: tuple[str, ...] = ()
    bad: bool = False

    def synced_with(self, info) -> bool:
        """This file last merged or wrote exactly the HEAD ``info`` (same ETag, same base)."""
        return self.etag == info.etag and self.snapshot == info.snapshot

    @property
    def head_bad(self) -> bool:
        return self.bad or (self.used is not None and self.used != self.snapshot)


def read_state(lib: Library, url: str) -> SyncState | None:
    row = lib.conn.execute("SELECT value FROM meta WHERE key = ?", (f"remote_state:{url}",)).fetchone()
    if row is None:
        return None
    try:
        d = json.loads(row[0])
        return SyncState(
            d["etag"],
            d["snapshot"],
            tuple(d["fingerprint"]),
            d.get("used"),
            tuple(d.get("deltas", ())),
            bool(d.get("bad", False)),
        )
    except (ValueError, KeyError, TypeError):
        return None  # unreadable bookkeeping only costs a re-merge


def write_state(conn: sqlite3.Connection, url: str, state: SyncState) -> None:
    doc = json.dumps(
        {
            "etag": state.etag,
            "snapshot": state.snapshot,
            "fingerprint": list(state.fingerprint),
            "used": state.used,
            "deltas": list(state.deltas),
            "bad": state.bad,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    )
    with atomic(conn):
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"remote_etag:{url}", state.etag))
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"remote_state:{url}", doc))


def ahead(lib: Library, url: str) -> bool:
    """Whether a push to ``url`` would publish anything (rows past the mark, or a bad HEAD to replace)."""
    st = read_state(lib, url)
    if st is None or st.head_bad:
        return True
    mark = read_mark(lib, url)
    if mark is not None:
        return pending(lib, mark)
    return tuple(fingerprint(lib.conn)) != st.fingerprint


__all__ = ["SyncState", "read_state", "write_state", "ahead"]
