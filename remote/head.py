"""HEAD.json (FORMAT §11): the one mutable object of a remote, and the chain it names.

HEAD names a full *base* snapshot (``snapshot``, ``size``), the *deltas* applied on top of it in
order (``deltas``: ``[{"sha", "size"}]``, each a small library file in ``snapshots/``), the
remote's tile count after all of them (``tiles``), and where a client falls back when HEAD
turns out bad: the previous base (``parent``) with the deltas it had (``parent_deltas``), then
older bases (``history``, newest first). ``library_id``, ``pushed_at``, ``pushed_by`` (the host:
``TILES_HOST`` or the machine's name) and ``nonce`` are informative; the nonce makes every body
(hence its ETag) unique.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import dataclass

from remote.backend import SHA_RE, Head
from tilelib.errors import RemoteError

MAX_HEAD_BYTES = 64 * 1024
HISTORY = 16  # older bases a HEAD names besides its parent
MAX_LISTED_DELTAS = 256


class BadHead(RemoteError):
    """HEAD.json exists but is not what FORMAT §11 says it must be."""


@dataclass(frozen=True)
class DeltaRef:
    sha: str
    size: int


@dataclass(frozen=True)
class HeadInfo:
    snapshot: str
    size: int
    tiles: int
    parent: str | None
    etag: str
    history: tuple[str, ...] = ()  # older bases, newest first (after ``parent``)
    deltas: tuple[DeltaRef, ...] = ()  # applied on top of ``snapshot``, in order
    parent_deltas: tuple[DeltaRef, ...] = ()

    def chain(self) -> list[str]:
        """HEAD's base, its parent, then the recorded older bases: the fallback order."""
        out: list[str] = []
        for sha in (self.snapshot, self.parent, *self.history):
            if sha and sha not in out:
                out.append(sha)
        return out

    def deltas_of(self, base: str) -> tuple[DeltaRef, ...]:
        """The deltas that belong on top of ``base`` when it is HEAD's base or its parent."""
        if base == self.snapshot:
            return self.deltas
        if base == self.parent:
            return self.parent_deltas
        return ()

    @property
    def delta_bytes(self) -> int:
        return sum(d.size for d in self.deltas)


def _deltas(v, bad) -> tuple[DeltaRef, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or len(v) > MAX_LISTED_DELTAS:
        raise bad("'deltas' must be a list of {sha, size}")
    out = []
    for d in v:
        if (
            not isinstance(d, dict)
            or not isinstance(d.get("sha"), str)
            or not SHA_RE.match(d["sha"])
            or type(d.get("size")) is not int
            or d["size"] < 0
        ):
            raise bad('each delta must be {"sha": sha256 hex, "size": bytes}')
        out.append(DeltaRef(d["sha"], d["size"]))
    return tuple(out)


def parse_head(head: Head, where: str) -> HeadInfo:
    """Validate HEAD.json bytes; BadHead with the reason if anything is off."""

    def bad(why: str) -> BadHead:
        return BadHead(f"remote {where}: HEAD.json is malformed ({why}); refusing to use it")

    if len(head.body) > MAX_HEAD_BYTES:
        raise bad(f"{len(head.body)} bytes")
    try:
        doc = json.loads(head.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise bad(f"not JSON: {err}") from err
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
    if (
        not isinstance(hist, list)
        or len(hist) > 4 * HISTORY
        or not all(isinstance(h, str) and SHA_RE.match(h) for h in hist)
    ):
        raise bad("'history' must be a list of sha256 hex digests")
    return HeadInfo(
        snap,
        doc["size"],
        doc["tiles"],
        parent,
        head.etag,
        tuple(hist),
        _deltas(doc.get("deltas"), bad),
        _deltas(doc.get("parent_deltas"), bad),
    )


HOST_ENV = "TILES_HOST"


def host_name(environ=None) -> str:
    """The pushing host's name, HEAD's ``pushed_by`` (and the nightly log's host): ``TILES_HOST``,
    else the machine's name; at most 64 characters."""
    environ = os.environ if environ is None else environ
    return (environ.get(HOST_ENV) or socket.gethostname() or "unknown")[:64]


def provenance(head: Head) -> tuple[str | None, str | None]:
    """(``pushed_at``, ``pushed_by``) of a HEAD: informative text, so each is None where the body
    lacks it or holds something else (a HEAD from older code, or a hostile one)."""
    try:
        doc = json.loads(head.body)
    except ValueError:
        return None, None
    if not isinstance(doc, dict):
        return None, None
    at, by = doc.get("pushed_at"), doc.get("pushed_by")
    return (at if isinstance(at, str) else None, by if isinstance(by, str) else None)


def head_body(
    snapshot: str,
    size: int,
    tiles: int,
    parent: str | None,
    library_id: str | None,
    history: list[str] | tuple[str, ...] = (),
    deltas: tuple[DeltaRef, ...] = (),
    parent_deltas: tuple[DeltaRef, ...] = (),
) -> bytes:
    """HEAD.json bytes (see the module docstring)."""
    ref = lambda ds: [{"sha": d.sha, "size": d.size} for d in ds]  # noqa: E731
    doc = {
        "snapshot": snapshot,
        "size": size,
        "deltas": ref(deltas),
        "tiles": tiles,
        "parent": parent,
        "parent_deltas": ref(parent_deltas),
        "history": list(history)[:HISTORY],
        "library_id": library_id,
        "pushed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "pushed_by": host_name(),
        "nonce": uuid.uuid4().hex,
    }
    return (json.dumps(doc, indent=1) + "\n").encode()


__all__ = ["BadHead", "DeltaRef", "HeadInfo", "HISTORY", "MAX_HEAD_BYTES", "head_body", "parse_head", "provenance"]
