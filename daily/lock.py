"""A non-blocking exclusive lock so two daily builds never run at once on one library."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from tilelib.errors import BuildLocked
from tilelib.fsio import no_follow_open


@contextlib.contextmanager
def build_lock(library: Path) -> Iterator[Path]:
    """Hold ``<library>.lock`` (flock) for the duration; BuildLocked if another process has it.

    flock is released by the kernel when the holder dies, so a crashed build
    never leaves a stale lock behind.
    """
    path = Path(str(library) + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = no_follow_open(path, os.O_RDWR | os.O_CREAT, 0o644)  # a symlink planted there is refused
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            # EAGAIN is how a held lock answers, not a failure: the message names the holder
            raise BuildLocked(f"another daily build (pid {holder}) holds {path}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield path
    finally:
        os.close(fd)
