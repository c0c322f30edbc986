"""What the benchmarks print about the machine they ran on (BENCHMARKS.md records it with each table)."""

from __future__ import annotations

import platform


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
