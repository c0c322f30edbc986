"""What making a client costs (issue 54): ``players.client.Client`` and ``AsyncClient``, made and closed
N times in one process (the first pays for the one shared TLS context), and the whole command of one
``tiles play``-sized script: start Python, import the client, make one.

    python scripts/bench_client.py [--n 2000]

Prints median, p99 and max in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from players.client import AsyncClient, Client  # noqa: E402


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]
    return f"{statistics.median(xs):.3f} | {p99:.3f} | {xs[-1]:.3f}"


def made_sync(url: str) -> float:
    t = time.perf_counter()
    c = Client(url)
    out = time.perf_counter() - t
    c.close()
    return 1e3 * out


def made_async(url: str) -> float:
    t = time.perf_counter()
    c = AsyncClient(url)
    out = time.perf_counter() - t
    asyncio.run(c.close())
    return 1e3 * out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--commands", type=int, default=20)
    a = ap.parse_args(argv)
    print("| what | n | median ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    for name, fn in (
        ("Client(url), http://", lambda: made_sync("http://127.0.0.1:9")),
        ("Client(url), https://", lambda: made_sync("https://127.0.0.1:9")),
        ("AsyncClient(url), http://", lambda: made_async("http://127.0.0.1:9")),
        ("AsyncClient(url), https://", lambda: made_async("https://127.0.0.1:9")),
    ):
        first = fn()
        xs = [fn() for _ in range(a.n)]
        print(f"| {name} (the first: {first:.1f} ms) | {a.n} | {stats(xs)} |")
    code = "from players.client import Client; Client('http://127.0.0.1:9').close()"
    xs = []
    for _ in range(a.commands):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        xs.append(1e3 * (time.perf_counter() - t))
    print(f"| whole command: python -c 'import and make a Client' | {a.commands} | {stats(xs)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
