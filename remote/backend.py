"""The one small storage interface both remotes implement (FORMAT §11).

A remote holds immutable snapshots ``snapshots/<sha256>.sqlite`` and one small
pointer ``HEAD.json``. The only write that must be atomic is the HEAD swap, a
compare-and-swap on the HEAD's ETag: ``put_head(body, if_match=etag)`` replaces
HEAD only if it still has that ETag, ``put_head(body, if_match=None)`` creates it
only if there is none. A CAS that loses raises ``LostRace``; everything else that
goes wrong raises ``RemoteError`` with a one-line reason.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from remote.url import RemoteURL, parse_remote
from tilelib import plugins
from tilelib.errors import RemoteError

HEAD_NAME = "HEAD.json"
SNAPSHOT_DIR = "snapshots"
SHA_RE = re.compile(r"^[0-9a-f]{64}$")
# A plain file's name under the prefix (the public mirror's days/…): parts of letters, digits, . _ -
FILE_NAME_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$")


def file_name(name: str) -> str:
    """``name`` if it may name a plain file under a remote's prefix (ValueError otherwise)."""
    if not FILE_NAME_RE.match(name) or ".." in name.split("/"):
        raise ValueError(f"not a remote file name: {name!r}")
    return name


def bounded(url, name: str, body: bytes, limit: int) -> bytes:
    """``body`` (read as at most ``limit`` + 1 bytes of ``name``) when it fits: what ``get_file``
    returns; RemoteError when the file is over ``limit`` bytes."""
    if len(body) > limit:
        raise RemoteError(f"remote {url}: {name} is over {limit:,} bytes")
    return body


class LostRace(RemoteError):
    """The HEAD changed between our read and our conditional write (HTTP 412/409, or the local CAS)."""


class Advance(Protocol):
    def advance(self, k: int = 1) -> None: ...


# progress(label, total) -> context manager yielding an object with advance(k);
# tiles_cli.progress.progress has exactly this shape.
ProgressFactory = Callable[[str, "int | None"], AbstractContextManager[Advance]]


@dataclass(frozen=True)
class Head:
    """The raw HEAD object: its bytes and the ETag to pass as ``if_match``."""

    body: bytes
    etag: str


@dataclass(frozen=True)
class SnapshotInfo:
    sha: str
    size: int
    modified: float  # unix seconds


def listed(entries: Iterable[tuple[str, int, float]]) -> list[SnapshotInfo]:
    """A listing of the snapshot folder — (file name, size, modified) per entry — as the snapshots it
    holds, oldest first (then by sha): every other file (a partial upload, a stray name) left out."""
    out = []
    for name, size, modified in entries:
        sha = name.removesuffix(".sqlite")
        if name.endswith(".sqlite") and SHA_RE.match(sha):
            out.append(SnapshotInfo(sha, size, modified))
    return sorted(out, key=lambda s: (s.modified, s.sha))


def snapshot_name(sha: str) -> str:
    if not SHA_RE.match(sha):
        raise ValueError(f"not a sha256 hex digest: {sha!r}")
    return f"{SNAPSHOT_DIR}/{sha}.sqlite"


class Backend(ABC):
    """Storage operations of one remote. Implementations: ``remote.s3``, ``remote.local``."""

    url: RemoteURL

    def __init__(self, url: RemoteURL) -> None:
        """Every backend can be made from its parsed URL alone (``open_backend``); some take more."""
        self.url = url

    def prepare(self) -> None:  # noqa: B027 (a hook most remotes need not override: not abstract)
        """Make the remote ready for writing (file://: create the directory). Default: nothing."""

    @abstractmethod
    def get_head(self) -> Head | None:
        """The current HEAD, or None when the remote has none yet."""

    @abstractmethod
    def put_head(self, body: bytes, if_match: str | None) -> str:
        """Swap HEAD to ``body`` iff its ETag is ``if_match`` (None: iff there is no HEAD).

        Returns the new ETag; raises LostRace if the condition failed."""

    @abstractmethod
    def has_snapshot(self, sha: str) -> bool:
        """Whether ``snapshots/<sha>.sqlite`` exists."""

    @abstractmethod
    def put_snapshot(self, sha: str, src: Path, progress: ProgressFactory | None = None) -> bool:
        """Upload the file ``src`` as snapshot ``sha`` unless it exists; True if bytes were sent."""

    @abstractmethod
    def get_snapshot(self, sha: str, dest: Path, progress: ProgressFactory | None = None) -> int:
        """Download snapshot ``sha`` into the file ``dest``; return its size.

        Raises RemoteError if the snapshot is missing."""

    @abstractmethod
    def list_snapshots(self) -> list[SnapshotInfo]:
        """Every snapshot, oldest first."""

    @abstractmethod
    def delete_snapshot(self, sha: str) -> None:
        """Delete one snapshot (only ever on explicit request: pruning)."""

    @abstractmethod
    def put_file(self, name: str, src: Path, content_type: str) -> None:
        """Upload ``src`` as the plain file ``<prefix>/<name>``, replacing any (the public mirror's
        day files, ``daily.publish``); the reader never sees half a file."""

    @abstractmethod
    def get_file(self, name: str, limit: int) -> bytes | None:
        """The plain file ``<prefix>/<name>`` (None when absent); RemoteError beyond ``limit`` bytes."""


def open_backend(url: str | RemoteURL | None) -> Backend:
    """The backend for a remote URL (BadInput if the URL is missing or malformed)."""
    u = url if isinstance(url, RemoteURL) else parse_remote(url)
    return plugins.load(plugins.REMOTE, u.scheme).BACKEND(u)
