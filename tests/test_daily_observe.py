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
