"""tilelib.heap: the C heap's free pages given back (before the stitch forks its halves, and after it)."""

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import os, sys
    from tilelib.heap import trim_heap

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    keep = []
    junk = [bytes(3000) for _ in range(60_000)]  # ~180 MB of C-heap blocks (bytes > 512 B: malloc)
    for i in range(0, len(junk), 50):
        keep.append(junk[i])  # one block in 50 stays: freed pages sit between live ones
    del junk
    before = rss_mb()
    trimmed = trim_heap()
    print(trimmed, round(before), round(rss_mb()))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim and /proc: Linux")
def test_trim_returns_freed_heap_pages_to_the_system():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True).stdout.split()
    trimmed, before, after = out[0] == "True", int(out[1]), int(out[2])
    assert trimmed, "glibc has malloc_trim"
    assert before - after > 100, (before, after)  # most of the ~176 MB freed between live blocks


RELEASE = textwrap.dedent(
    """
    import os, sqlite3, sys, tempfile
    from tilelib.heap import release

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    path = os.path.join(tempfile.mkdtemp(), "cache.sqlite")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA cache_size = -200000")  # room for every page read below (~200 MB)
    conn.execute("CREATE TABLE t (b BLOB)")
    conn.executemany("INSERT INTO t VALUES (?)", ((os.urandom(4000),) for _ in range(20_000)))
    conn.commit()
    assert sum(len(b) for (b,) in conn.execute("SELECT b FROM t")) == 80_000_000
    before = rss_mb()
    release(conn)
    print(round(before), round(rss_mb()))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim and /proc: Linux")
def test_release_drops_the_page_cache_a_stage_read():
    """What the build calls after its stitch: a connection's ~80 MB of cached pages go back."""
    before, after = map(
        int, subprocess.run([sys.executable, "-c", RELEASE], capture_output=True, text=True, check=True).stdout.split()
    )
    assert before - after > 50, (before, after)
