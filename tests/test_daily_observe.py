"""daily.observe: the off-terminal progress line (at most one per interval) and the I/O counters."""

from __future__ import annotations

from daily.observe import ProgressLog, disk_writes, peak_rss_bytes, write_calls
from stitcher.stats import StitchStats


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_progress_lines_come_at_most_once_per_interval_and_say_where_the_stitch_is():
    clock, lines = Clock(), []
    st = StitchStats()
    p = ProgressLog(lines.append, interval=15.0, clock=clock)
    total = 400
    for done in range(1, total + 1):
        clock.t += 0.25  # 100 s in all
        if done % 10 == 0:
            st.bump(6, "drained")
        p(done, total, st)
    assert len(lines) == 6  # at 15, 30, ..., 90 s
    assert p.lines == 6
    first = lines[0]
    assert "60/400 squares (15.0%)" in first and "drained 6," in first
    assert "15 s elapsed, ETA 85 s" in first
    assert "drained 36," in lines[-1] and "ETA 10 s" in lines[-1]


def test_progress_before_any_square_has_no_eta_and_works_without_stats():
    clock, lines = Clock(), []
    p = ProgressLog(lines.append, interval=1.0, clock=clock)
    clock.t += 2
    p(0, 10)
    assert lines == ["stitch   0/10 squares (0.0%), 2 s elapsed, ETA unknown"]


def test_io_counters_move_when_the_process_writes(tmp_path):
    before, calls = disk_writes(), write_calls()
    (tmp_path / "x").write_bytes(b"\x01" * (1 << 20))
    import os

    fd = os.open(tmp_path / "x", os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    after = disk_writes()
    if before is not None:  # Linux; tmpfs reports 0 written to storage
        assert after >= before
    if calls is not None:
        assert write_calls() - calls >= 1 << 20
    assert peak_rss_bytes() > 10 * 1024 * 1024


def test_the_peak_is_this_programs_own_not_its_launchers():
    """A program forked from a large process (here: one holding 400 MB) reports its own peak, not
    the launcher's: Linux carries ru_maxrss across exec, VmHWM starts afresh (``peak_rss_bytes``)."""
    import subprocess
    import sys

    code = (
        "import resource, subprocess, sys\n"
        "big = bytearray(400 << 20)\n"
        "big[::4096] = b'x' * len(big[::4096])  # touched: resident\n"
        "probe = 'import resource; from daily.observe import peak_rss_bytes; "
        "print(peak_rss_bytes(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)'\n"
        "print(subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True, check=True).stdout)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    own, inherited = int(out[0]), int(out[1])
    assert own < 200 << 20, own  # the probe itself: an interpreter and numpy-free imports
    if sys.platform.startswith("linux"):
        assert inherited > 380 << 20  # the bug class this guards against, shown on this kernel
