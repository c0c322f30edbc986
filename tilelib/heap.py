"""Memory a stage freed, given back to the system before the next one holds more (or forks).

A night's stages run in one process: the stitch builds the library's index and reads its pages,
then drops them; the clues and verify build the board. Python and SQLite free memory to their own
allocators, which keep it resident: on a 1,000,000-tile library the parent still held ~75 MB of the
stitch's after it returned, and its verify (which forks, ``referee.verify``) peaked above the
halves. ``release`` hands it back, so what a night holds is bounded by the stage running, not
by the largest one before it: the build calls it after the stitch, the stitch before it forks
its halves (``stitcher.halves``).
"""

from __future__ import annotations

import gc
import sqlite3


def trim_heap() -> bool:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim``): what was freed is
    otherwise still resident, and inherited by a fork. False, doing nothing, where the C library
    has no malloc_trim."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    if trim is None:
        return False
    trim(0)
    return True


def release(conn: sqlite3.Connection | None = None) -> None:
    """Collect unreachable cycles, drop the connection's page cache (it reads pages again as it
    needs them), and trim the heap."""
    gc.collect()
    if conn is not None:
        conn.execute("PRAGMA shrink_memory")
    trim_heap()


__all__ = ["release", "trim_heap"]
