"""What the benchmarks print about the machine they ran on (BENCHMARKS.md records it with each table),
how they time a process, and the percentile they report."""

from __future__ import annotations

import math
import platform
import resource
import subprocess
import time


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (what `lscpu` shows), else the platform's guess."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def timed_run(cmd: list[str], **kw) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``cmd`` (``subprocess.run`` with captured text output and ``kw``); returns it with its wall
    seconds and the CPU seconds of it and every child it waited for (the stitch's workers)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def nearest_rank(xs: list[float], q: float) -> float:
    """The q-quantile of ``xs`` by nearest rank (q = 0.99: the p99 the tables print; with fewer than
    100 samples, the largest)."""
    s = sorted(xs)
    return s[max(0, math.ceil(q * len(s)) - 1)]
