"""Days as they come: the service looks in the library for manifests it does not offer yet.

``tiles referee serve`` over a library (no ``--manifest``, no ``--day``) polls the library's
``manifests`` table every ``every`` seconds. A new day's board is rebuilt (``load_days``, the one
manifest gate) in a daemon thread — seconds for a G=1000 board, while requests go on — and then
handed to the store on the event loop (``RunStore.add_day``, the one way the days change), so the
day is listed and playable without a restart. A manifest that fails the gate is reported once and
not tried again until the service restarts. Being a daemon thread, a load under way never delays
shutdown.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.service.boards import DayBoard, load_days, settle
from referee.service.runs import RunStore
from tilelib import ledger
from tilelib.errors import TilesError
from tilelib.store import Library

EVERY = 10.0


def library_days(library: Path) -> list[str]:
    """The days the library holds a manifest for."""
    with Library.open(library) as lib:
        return ledger.manifest_days(lib.conn)


def load_new(library: Path, runs: str | Path, days: list[str]) -> dict[str, DayBoard]:
    """Boards of ``days`` from the library (blocking: run it off the event loop). ``runs`` is a file
    or a ``postgresql://`` URL, as ``--runs`` gave it: a URL stays a str (``Path`` would fold its
    ``//``, and only a str is taken for a URL)."""
    with Library.open(library) as lib:
        return load_days(lib, runs, days=days)


def _settle(done: asyncio.Future, out: Any, err: BaseException | None) -> None:
    """Hand ``err`` (else ``out``) to ``done``, on its loop, unless it is settled already (cancelled:
    the awaiting task went away)."""
    if done.done():
        return
    if err is not None:
        done.set_exception(err)
    else:
        done.set_result(out)


async def _off_loop(fn: Callable, *args):
    """``fn(*args)`` in a daemon thread, awaited without blocking the loop."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()

    def work() -> None:
        try:
            out = fn(*args)
        except BaseException as e:  # handed to the awaiting task, which reports it
            loop.call_soon_threadsafe(_settle, done, None, e)
        else:
            loop.call_soon_threadsafe(_settle, done, out, None)

    threading.Thread(target=work, daemon=True, name="tiles-load-day").start()
    return await done


async def watch(
    store: RunStore, library: Path, runs: str | Path, log: Callable[[str], None], every: float = EVERY
) -> None:
    """Poll the library forever (until cancelled) and add each new day to ``store``."""
    failed: set[str] = set()
    while True:
        await asyncio.sleep(every)
        try:
            new = [d for d in await _off_loop(library_days, library) if d not in store.days and d not in failed]
        except (TilesError, OSError, sqlite3.Error) as e:  # e.g. locked by a build: look again later
            log(f"cannot read the library for new days ({e})")
            continue
        for day in new:
            try:
                boards = await _off_loop(load_new, library, runs, [day])
            except (OSError, sqlite3.OperationalError) as e:  # transient: try again at the next poll
                log(f"{day}: cannot load it yet ({e})")
                continue
            except Exception as e:  # the gate refused it (or a bug): once
                failed.add(day)
                log(f"{day}: not offered ({type(e).__name__}: {e})")
                continue
            for db in boards.values():
                store.add_day(db)
                log(f"{day}: G={db.board.G}, {len(db.board.squares)} tiles, now on offer")
            settle()
