"""What the benchmarks print about the machine they ran on (BENCHMARKS.md records it with each table),
how they time a process (and measure its memory, children included), and the percentile they report."""

from __future__ import annotations

import math
import platform
import resource
import subprocess
import threading
import time
from pathlib import Path


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


def _tree(root: int) -> list[int]:
    """``root`` and every process descended from it now (a scan of /proc's parent ids)."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(c for c, p in parent.items() if p == pid)
    return out


def _pss(pid: int) -> int:
    """Proportional set size of one process in bytes (its shared pages divided among their sharers,
    so a forked worker's inherited pages are not counted twice); 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def memory_run(cmd: list[str], interval: float = 0.1, **kw) -> tuple[subprocess.CompletedProcess, float, float, int]:
    """``timed_run`` that also samples, every ``interval`` s, the summed PSS of the process and all
    its descendants (the stitch's forked halves): returns (result, wall, cpu, peak bytes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], sum(_pss(p) for p in _tree(proc.pid)))
            time.sleep(interval)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    out, err = proc.communicate()
    watcher.join()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    return r, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), peak[0]


def nearest_rank(xs: list[float], q: float) -> float:
    """The q-quantile of ``xs`` by nearest rank (q = 0.99: the p99 the tables print; with fewer than
    100 samples, the largest)."""
    s = sorted(xs)
    return s[max(0, math.ceil(q * len(s)) - 1)]
