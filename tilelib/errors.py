"""Named exceptions of the tiles project and the one table that maps them to exit codes.

Every package raises these (or subclasses defined next to them); the CLI catches
``TilesError`` in exactly one place (``tiles_cli.app.main``) and turns it into a
one-line message and ``exit_code(err)``. Nothing else decides exit codes.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Sequence


class TilesError(Exception):
    """Base of every error the project raises on purpose."""


class BadInput(TilesError):
    """Malformed user input: a puzzle string, an argument, a JSON file, a seed."""


class NotFound(BadInput):
    """Asked for something that does not exist: a run, a day not on offer (HTTP 404 in the service)."""


class Unauthorized(BadInput):
    """A write that needs the run's token sent without one, or with a malformed one (no Authorization
    header, not ``Bearer``, an empty token: HTTP 401 in the service, RFC 6750)."""


class Forbidden(BadInput):
    """A write with a wrong token, or a secret asked for too early (HTTP 403 in the service)."""


class OffFrontier(BadInput):
    """A move on a tile the run cannot play yet: not the seed tile, no seam with a solved tile
    (HTTP 409 in the service; the CLI judge records it as a rejected move instead)."""


class TooLarge(BadInput):
    """A request over a size limit: body bytes, moves per request (HTTP 413 in the service)."""


class Conflict(BadInput):
    """A request that contradicts one already answered: an Idempotency-Key reused with another body
    (HTTP 409 in the service)."""


class UnsupportedMedia(BadInput):
    """A request body that is not declared ``application/json`` (HTTP 415 in the service)."""


class LibraryError(TilesError):
    """The tile library cannot be used as asked."""


class NotALibrary(LibraryError):
    """The file exists but is not a tiles library (no meta table / schema_version)."""


class SchemaTooNew(LibraryError):
    """The library was written by a newer schema version than this code knows."""


class CorruptLibrary(LibraryError):
    """SQLite reports corruption, or integrity checks fail."""


class HashMismatch(CorruptLibrary):
    """A stored row's content does not hash to its key."""


class SchemaMismatch(CorruptLibrary):
    """A library file's schema (its tables, indexes, triggers and views) differs from the one the code
    ships for its schema version (``tilelib.schema``): an extra trigger can drop rows, a view can
    shadow a table. Exit 3, naming the object."""


class RowsNotStored(CorruptLibrary):
    """Rows asked for were not stored (something in the file dropped them): exit 3, naming the first."""


class UnknownTile(LibraryError):
    """No tile with that hash in the library."""


class DiskFull(LibraryError):
    """A local file could not be written: no room left (ENOSPC, EDQUOT), past the size a file may
    have (EFBIG), or a file system mounted read-only (EROFS)."""


# the OSError numbers that mean "this machine's disk refuses the write" (``disk_error``)
DISK_ERRNOS = frozenset(getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EFBIG", "EROFS") if hasattr(errno, n))


def disk_error(err: BaseException) -> DiskFull | None:
    """``err`` as one ``DiskFull`` line when it is an OSError of ``DISK_ERRNOS`` (wherever it was
    raised: SQLite reports its own as "database or disk is full"), else None."""
    if not isinstance(err, OSError) or err.errno not in DISK_ERRNOS:
        return None
    where = f" writing {err.filename}" if err.filename else ""
    return DiskFull(f"the disk refused a write{where}: {err.strerror or err}; free space, then run it again")


class RemoteError(TilesError):
    """The library remote is unreachable, refuses us, or holds bad data."""


class Unreachable(RemoteError):
    """The referee service does not answer: refused, timed out, or 5xx after every retry (the
    client, ``tiles play``; exit 4 like any remote that is unreachable)."""


class RateLimited(RemoteError):
    """A request over a fair-use quota (``referee.service.quota``: HTTP 429 with ``Retry-After``);
    ``retry_after`` is the seconds to wait. The client waits and sends it again; when it gives up it
    is exit 4 like a service that does not answer."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class DatabaseUnavailable(RemoteError):
    """The runs database (PostgreSQL) cannot be reached or refuses us, or went away mid-write for
    longer than the service waits (exit 4; the service answers 503, which the client retries)."""


class DatabaseBusy(DatabaseUnavailable):
    """The runs database cannot take the work now — another process holds the SQLite file's write
    lock, PostgreSQL does not answer — and nothing of it was done, so it is safe to send again after
    a moment (exit 4; the service tries again off its event loop for a second or two, then answers
    503 with ``Retry-After``)."""


class VerificationFailed(TilesError):
    """A board, manifest or packing failed verification."""


class BuildLocked(TilesError):
    """Another daily build holds the lock."""


class NotBuilt(TilesError):
    """A call needs a C extension that is not built (``tilelib.native``; exit 1, "anything else")."""


# The one place that maps error types to exit codes. Order matters: the first
# class in this list that the error is an instance of wins (subclasses first).
EXIT_CODES: list[tuple[type[BaseException], int]] = [
    (BadInput, 2),
    (UnknownTile, 2),
    (SchemaTooNew, 3),
    (NotALibrary, 3),
    (CorruptLibrary, 3),
    (LibraryError, 3),
    (sqlite3.DatabaseError, 3),  # SQLite found the file corrupt mid-query
    (RemoteError, 4),
    (VerificationFailed, 5),
    (BuildLocked, 6),
    (TilesError, 1),
]


def _first(table: Sequence[tuple[type[BaseException], int]], err: BaseException, default: int) -> int:
    """The number of the first entry of ``table`` whose class ``err`` is an instance of, else ``default``."""
    return next((n for cls, n in table if isinstance(err, cls)), default)


def exit_code(err: BaseException) -> int:
    """Exit code for an error: the first matching entry of ``EXIT_CODES``, else 1."""
    return _first(EXIT_CODES, err, 1)


def one_line(err: BaseException) -> str:
    """An error's one line (after ``tiles: error:``, and in the nightly log): a verification
    failure names its step as ``step <step>: <reason>`` (FORMAT §10), so step ``tiles`` never reads
    as a second prefix."""
    step = getattr(err, "step", None)
    return f"step {err}" if isinstance(step, str) else str(err)


# The one place that maps error types to the service's HTTP status (``referee.service.app``); the
# same types map to exit codes above, so `tiles play` and the service tell the same story.
HTTP_STATUS: list[tuple[type[TilesError], int]] = [
    (NotFound, 404),
    (Unauthorized, 401),
    (Forbidden, 403),
    (OffFrontier, 409),
    (Conflict, 409),
    (TooLarge, 413),
    (UnsupportedMedia, 415),
    (BadInput, 400),
    (RateLimited, 429),
    (DatabaseUnavailable, 503),
]


def http_status(err: BaseException) -> int:
    """HTTP status for an error: the first matching entry of ``HTTP_STATUS``, else 500 (a bug)."""
    return _first(HTTP_STATUS, err, 500)


def error_for_status(status: int, message: str) -> TilesError:
    """The error a client raises for a 4xx answer: the first type ``HTTP_STATUS`` maps to ``status``
    (so 404 is NotFound, 409 OffFrontier, 415 UnsupportedMedia), else BadInput. 409 is two types;
    the service's line names the Idempotency-Key when it is a Conflict."""
    cls = next((c for c, s in HTTP_STATUS if s == status), BadInput)
    if status == 409 and "Idempotency-Key" in message:
        cls = Conflict
    return cls(f"{status}: {message}")
