"""What an operator watching the nightly build sees (issue 12, part 5): progress lines, I/O, memory.

``ProgressLog`` turns the stitcher's per-square progress calls into at most one line every
``interval`` seconds (15 s by default): squares done of total, drained and nofit so far,
elapsed and an ETA from the rate so far. It is for logs (cron, CI, a pipe): a terminal gets
the progress bar instead. ``disk_writes`` and ``peak_rss_bytes`` read this process's own
counters (Linux ``/proc/self/io`` and ``getrusage``) for the build's summary.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

INTERVAL = 15.0


def _proc_io(key: str) -> int | None:
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split(":")[1])
    except (OSError, ValueError):
        pass
    return None


def disk_writes() -> int | None:
    """Bytes this process has caused to be written to storage so far (``write_bytes`` of
    /proc/self/io), or None where the kernel does not say. An fsync charges the process with
    writing back whatever else is dirty in the file system, so on a busy machine this can
    exceed what the process wrote; ``write_calls`` is the plain count."""
    return _proc_io("write_bytes")


def write_calls() -> int | None:
    """Bytes this process has passed to write() and its kin so far (``wchar``), or None."""
    return _proc_io("wchar")


def peak_rss_bytes() -> int:
    """Peak resident memory of this program so far: Linux's ``VmHWM`` (the high-water mark of this
    process's own memory since it started the program), else ru_maxrss (KiB on Linux, bytes on
    macOS). Not ru_maxrss where VmHWM exists: Linux carries it across exec from the process that
    forked this one, so a build started from a large process (a bench holding an S3 server) would
    report that process's memory as its own."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(r) if sys.platform == "darwin" else int(r) * 1024


class ProgressLog:
    """A stitch progress callback ``(done, total, stats)`` that logs at most every ``interval`` s."""

    def __init__(
        self,
        log: Callable[[str], None],
        label: str = "stitch",
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.log, self.label, self.interval, self.clock = log, label, interval, clock
        self.start = clock()
        self.last = self.start
        self.lines = 0

    def __call__(self, done: int, total: int, stats=None) -> None:
        now = self.clock()
        if now - self.last < self.interval:
            return
        self.last = now
        self.lines += 1
        self.log(self.line(done, total, stats, now - self.start))

    def line(self, done: int, total: int, stats, elapsed: float) -> str:
        parts = [f"{self.label:<8} {done:,}/{total:,} squares ({100 * done / max(total, 1):.1f}%)"]
        if stats is not None:
            parts.append(
                f"drained {stats.total('drained'):,}, nofit {stats.total('nofit'):,}, "
                f"fallbacks {stats.total('fallbacks'):,}"
            )
        eta = elapsed / done * (total - done) if done else None
        parts.append(f"{elapsed:.0f} s elapsed, ETA " + (f"{eta:.0f} s" if eta is not None else "unknown"))
        return ", ".join(parts)
