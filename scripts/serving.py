"""Starting `tiles referee serve` for a benchmark: a free loopback port, and waiting until it answers."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(proc, base: str, log: Path) -> float:
    """Seconds until ``GET base/api/v1/days`` answers 200; exits with the service's log if it died."""
    t0 = time.perf_counter()
    while True:
        if proc.poll() is not None:
            sys.exit(f"serve exited {proc.returncode}: {log.read_text()}")
        try:
            if httpx.get(base + "/api/v1/days", timeout=2).status_code == 200:
                return time.perf_counter() - t0
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
