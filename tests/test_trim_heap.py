"""The stitch gives the C heap's free pages back before it forks its halves (stitcher.halves)."""

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import os, sys
    from stitcher.halves import _trim_heap

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    keep = []
    junk = [bytes(3000) for _ in range(60_000)]  # ~180 MB of C-heap blocks (bytes > 512 B: malloc)
    for i in range(0, len(junk), 50):
        keep.append(junk[i])  # one block in 50 stays: freed pages sit between live ones
    del junk
    before = rss_mb()
    trimmed = _trim_heap()
    print(trimmed, round(before), round(rss_mb()))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim and /proc: Linux")
def test_trim_returns_freed_heap_pages_to_the_system():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True).stdout.split()
    trimmed, before, after = out[0] == "True", int(out[1]), int(out[2])
    assert trimmed, "glibc has malloc_trim"
    assert before - after > 100, (before, after)  # most of the ~176 MB freed between live blocks
