"""Progress bars that show only on a terminal (stderr is a TTY); silent in cron and CI."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


class _Silent:
    def advance(self, k: int = 1) -> None:
        pass

    def total(self, total: int) -> None:
        pass

    def set(self, done: int) -> None:
        pass


class _Bar:
    def __init__(self, progress, task) -> None:
        self._p, self._t = progress, task

    def advance(self, k: int = 1) -> None:
        self._p.advance(self._t, k)

    def total(self, total: int) -> None:
        self._p.update(self._t, total=total)

    def set(self, done: int) -> None:
        self._p.update(self._t, completed=done)


@contextlib.contextmanager
def progress(label: str, total: int | None = None) -> Iterator[_Bar | _Silent]:
    """Yield an object with ``advance(k)``; draws a bar only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield _Silent()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as p:
        yield _Bar(p, p.add_task(label, total=total))
