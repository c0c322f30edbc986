"""Writing output files so that a failure never leaves half a file behind, and nothing planted beside
a file redirects a write.

Every file the project writes goes through one of two helpers:

- ``atomic_write(path, data)``: bytes into a temp file created exclusively (``O_CREAT | O_EXCL``,
  a random name beside ``path``, so a symlink planted at any name it could use is never followed),
  fsynced, renamed over ``path`` (``rename`` replaces a symlink at ``path`` itself, never its
  target), then the directory fsynced so the rename survives a power cut.
- ``staged(path)``: a fresh private directory (``mkdtemp``: 0700, random name) beside ``path`` in
  which the caller builds a file SQLite writes with journals of its own (a bundle, a repaired
  library); on success the file is fsynced and moved onto ``path`` the same way, and the directory
  is removed either way. ``replace=False`` never clobbers an existing ``path`` (``link``).

``no_follow_open`` opens a lock file without following a symlink at its name. ``check_placeable``
says before anything is written whether an output can be made where it is asked (its kind, its
folder writable); ``refuse_symlink`` refuses a symbolic link where a file is created or replaced.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tilelib.errors import BadInput


def _umask() -> int:
    """The process's umask (read once: setting it back at once leaves it as it was)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # what open(path, "w") would have given the file


def fsync_dir(path: Path) -> None:
    """fsync a directory, so a rename or link inside it is on disk (skipped where the file system
    cannot open a directory; a failing fsync is an error)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    """fsync a file's data (opened without following a symlink)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def install(tmp: Path, p: Path, replace: bool) -> None:
    """Move the finished ``tmp`` onto ``p`` (``replace``: rename over it; else link, FileExistsError
    if ``p`` exists), then fsync the directory."""
    if replace:
        os.replace(tmp, p)
    else:
        os.link(tmp, p, follow_symlinks=False)
        tmp.unlink()
    fsync_dir(p.parent)


def atomic_write(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically and durably (module docstring). An OS
    error (missing directory, no permission, disk full) is BadInput naming the path, and the temp
    file is removed."""
    p = Path(path)
    blob = data.encode("utf-8") if isinstance(data, str) else data
    tmp: Path | None = None
    try:
        fd, name = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
        tmp = Path(name)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), _FILE_MODE)
            fh.write(blob)
            fh.flush()
            os.fsync(fh.fileno())
        install(tmp, p, replace=True)
    except OSError as e:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise BadInput(f"cannot write {p}: {e.strerror}") from e
    return p


@contextmanager
def staged(path: str | Path, *, replace: bool = True) -> Iterator[Path]:
    """Yield a path, in a new private directory beside ``path``, to build a file at; when the block
    ends without an error, fsync that file and move it onto ``path`` (``replace=False``: BadInput if
    ``path`` exists meanwhile). The directory and anything left in it are removed either way."""
    p = Path(path)
    try:
        work = Path(tempfile.mkdtemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent))
    except OSError as e:
        raise BadInput(f"cannot write {p}: {e.strerror}") from e
    try:
        tmp = work / p.name
        yield tmp
        fsync_file(tmp)
        os.chmod(tmp, _FILE_MODE)
        try:
            install(tmp, p, replace)
        except FileExistsError:
            raise BadInput(f"{p} appeared while it was being written; it is left as it is") from None
    except OSError as e:
        raise BadInput(f"cannot write {p}: {e.strerror}") from e
    finally:
        shutil.rmtree(work, ignore_errors=True)


def no_follow_open(path: str | Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` that refuses a symlink at ``path`` (BadInput naming it) instead of following it."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:  # the name is a symlink
            raise BadInput(f"{path} is a symbolic link; refusing to open it") from None
        raise


def check_placeable(path: str | Path, what: str, *, want_dir: bool = False, writable: bool = True) -> Path:
    """``path`` can become a file (or, ``want_dir``, a directory): BadInput naming ``what`` when it is
    the wrong kind already, lies under a file, or (``writable``, every output) its folder — the nearest
    one that exists — takes no new file (read-only, not ours, a read-only mount). Checked before the
    first row of any output is written, so bad input writes nothing. A probe file is made and removed;
    nothing else is created."""
    p = Path(path)
    if want_dir and p.exists() and not p.is_dir():
        raise BadInput(f"{what} {p} is a file, not a directory")
    if not want_dir and p.is_dir():
        raise BadInput(f"{what} {p} is a directory, not a file")
    folder = p if want_dir and p.is_dir() else None
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise BadInput(f"{what} {p} is under {parent}, which is a file")
            folder = folder or parent
            break
    if writable and folder is not None:
        _probe(folder, what, p)
    return p


def _probe(folder: Path, what: str, p: Path) -> None:
    """Make and remove a file in ``folder`` (what the permission bits say is not enough: root ignores
    them, a read-only mount does not show in them); BadInput naming ``what`` if it cannot be made."""
    try:
        fd, name = tempfile.mkstemp(prefix=".tiles-probe-", dir=folder)
    except OSError as err:
        raise BadInput(f"{what} {p}: cannot write in {folder} ({err.strerror or err})") from err
    os.close(fd)
    os.unlink(name)


def refuse_symlink(path: str | Path, what: str) -> Path:
    """``path`` itself is not a symbolic link (dangling or not): BadInput naming ``what``. For a file a
    command creates or replaces, where following a link would put it somewhere else."""
    p = Path(path)
    if p.is_symlink():
        raise BadInput(f"{what} {p} is a symbolic link; refusing to create or replace a file through it")
    return p


__all__ = [
    "atomic_write",
    "check_placeable",
    "fsync_dir",
    "fsync_file",
    "install",
    "no_follow_open",
    "refuse_symlink",
    "staged",
]
