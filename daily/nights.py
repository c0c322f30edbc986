"""The nights one host ran, for its operator (issue 74): what ``tiles daily build`` appends after
every run, succeeded or not, and what ``tiles daily status`` and a monitoring system read of it.

- **The log**: one JSON line per run in ``<library>.nights`` beside the library (like the caches
  there: this host's own, never synced): the day, the host (``TILES_HOST``, else the machine's
  name), when it started, wall and CPU seconds, the exit code and the error's one line, peak RSS,
  the S3 attempts that failed and were logged, the library's rows and bytes, and the fewest
  nights of stock left over the sides n >= 10.
- **The metrics** (``tiles daily build --metrics FILE``): the same of the last run, and when the
  last run that succeeded ended, as a Prometheus text file, written whole (temp file and rename)
  where node_exporter's textfile collector reads it.
- **The status** (``tiles daily status``): the last night this host built, the runs that failed
  since, and the remote's last push (when and from which host: its HEAD's ``pushed_by``).

Pure functions over plain ``Run`` values; only ``append`` and ``read`` touch the file, and a log
that cannot be written (a full disk) never hides the build's own error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from daily.observe import peak_rss_bytes
from remote.head import host_name

SUFFIX = ".nights"


@dataclass(frozen=True)
class Run:
    """One ``tiles daily build`` run (module doc)."""

    day: str
    host: str
    started: str  # UTC, YYYY-MM-DDTHH:MM:SSZ
    seconds: float
    cpu_seconds: float
    exit: int
    error: str | None = None
    peak_rss_bytes: int = 0
    s3_retries: int = 0
    tiles: int | None = None
    library_bytes: int | None = None
    stock_nights_left: float | None = None

    @property
    def ok(self) -> bool:
        return self.exit == 0


def log_path(library: str | Path) -> Path:
    return Path(str(library) + SUFFIX)


def append(library: str | Path, run: Run) -> bool:
    """Add ``run`` to the library's log (one line, flushed to disk); False when it cannot be written."""
    try:
        with open(log_path(library), "a", encoding="utf-8") as f:
            f.write(json.dumps(asdict(run), separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
        return True
    except OSError:
        return False


def read(library: str | Path) -> list[Run]:
    """The runs in the library's log, oldest first (a line that is not a run, such as one cut by a
    crash, is skipped)."""
    try:
        text = log_path(library).read_text("utf-8")
    except FileNotFoundError:
        return []
    names = {f.name for f in fields(Run)}
    out = []
    for line in text.splitlines():
        try:
            doc = json.loads(line)
            out.append(Run(**{k: v for k, v in doc.items() if k in names}))
        except (ValueError, TypeError):
            continue
    return out


@dataclass(frozen=True)
class Status:
    """What ``tiles daily status`` says: the last run, the last that succeeded, the failures since."""

    last: Run | None
    last_ok: Run | None
    failed_since: tuple[Run, ...]

    def lines(self) -> list[str]:
        if self.last is None:
            return ["no night built on this host yet (no runs in its log)"]
        out = []
        if self.last_ok is not None:
            r = self.last_ok
            out.append(f"last night built here: {r.day} on {r.host}, started {r.started}, {r.seconds:.1f} s")
        else:
            out.append("no night built here yet")
        if self.failed_since:
            out.append(f"failed since: {len(self.failed_since)} run(s)")
            out += [f"  {r.day} on {r.host} at {r.started}: exit {r.exit}: {r.error or '?'}" for r in self.failed_since]
        else:
            out.append("nothing failed since")
        return out


def status(runs: list[Run]) -> Status:
    """The status of a host's log (``runs`` oldest first)."""
    k = max((i for i, r in enumerate(runs) if r.ok), default=-1)
    return Status(runs[-1] if runs else None, runs[k] if k >= 0 else None, tuple(runs[k + 1 :]))


_METRICS = (
    # (name, help, the value of a run)
    ("tiles_daily_last_run_exit_code", "Exit code of the last tiles daily build (0: built).", lambda r: r.exit),
    ("tiles_daily_last_run_seconds", "Wall seconds of the last run.", lambda r: r.seconds),
    ("tiles_daily_last_run_cpu_seconds", "CPU seconds of the last run (its processes).", lambda r: r.cpu_seconds),
    ("tiles_daily_last_run_peak_rss_bytes", "Peak resident memory of the last run.", lambda r: r.peak_rss_bytes),
    ("tiles_daily_last_run_s3_retries", "S3 attempts that failed during the last run.", lambda r: r.s3_retries),
    ("tiles_daily_library_tiles", "Tile rows in the library after the last run.", lambda r: r.tiles),
    ("tiles_daily_library_bytes", "Bytes of the library file after the last run.", lambda r: r.library_bytes),
    (
        "tiles_daily_stock_nights_left",
        "Fewest nights of fair-rule stock left over the sides n >= 10.",
        lambda r: r.stock_nights_left,
    ),
)


def _epoch(stamp: str) -> int:
    import calendar
    import time

    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def metrics(runs: list[Run]) -> str:
    """The Prometheus text file of a host's log (module doc), written by prometheus-client (the
    service's ``/metrics`` writer too): a gauge each, labelled with the host;
    ``tiles_daily_last_success_timestamp_seconds`` the end of the last run that built."""
    from prometheus_client import CollectorRegistry, Gauge, generate_latest

    st = status(runs)
    if st.last is None:
        return ""
    registry, host = CollectorRegistry(), st.last.host

    def gauge(name: str, help_: str, value) -> None:
        if value is not None:
            Gauge(name, help_, ["host"], registry=registry).labels(host=host).set(value)

    for name, help_, of in _METRICS:
        gauge(name, help_, of(st.last))
    gauge("tiles_daily_last_run_timestamp_seconds", "When the last run started (unix time).", _epoch(st.last.started))
    if st.last_ok is not None:
        end = _epoch(st.last_ok.started) + round(st.last_ok.seconds)
        gauge("tiles_daily_last_success_timestamp_seconds", "When the last run that built ended (unix time).", end)
    gauge("tiles_daily_failed_runs_since_success", "Runs that failed since the last that built.", len(st.failed_since))
    return generate_latest(registry).decode()


class _S3Lines:
    """While a run lasts: each line of the ``remote.s3`` logger (a failed S3 attempt) counted and
    passed to the run's log (a handler of its own replaces Python's last-resort printing)."""

    def __init__(self, log) -> None:
        import logging

        class Handler(logging.Handler):
            def emit(inner, record: logging.LogRecord) -> None:  # noqa: N805 (the handler's own self)
                self.count += 1
                log(record.getMessage())

        self.count = 0
        self.handler = Handler(logging.WARNING)
        self.logger = logging.getLogger("remote.s3")

    def __enter__(self) -> _S3Lines:
        self.logger.addHandler(self.handler)
        return self

    def __exit__(self, *_exc) -> None:
        self.logger.removeHandler(self.handler)


@contextmanager
def recorded(library: Path, day: str, metrics_file: Path | None, log) -> Iterator[dict]:
    """Run the body as one night's build of ``day`` and append its ``Run`` to ``library``'s log —
    succeeded or not (the error re-raised as it was) — then write ``metrics_file`` (the Prometheus
    text of the log) when given. The body puts the build's ``summary`` (``BuildResult.summary()``)
    into the dict it is given. A ``metrics_file`` that could not be written (a directory, a folder
    that does not exist or takes no file) is BadInput before the body runs."""
    import sqlite3
    import time

    from tilelib.errors import BadInput, TilesError, disk_error, exit_code, one_line
    from tilelib.fsio import check_placeable

    if metrics_file is not None:  # bad input before the build, which then writes nothing
        check_placeable(metrics_file, "--metrics")
        if not metrics_file.parent.is_dir():
            raise BadInput(f"--metrics {metrics_file}: its folder {metrics_file.parent} does not exist")
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0, cpu0 = time.perf_counter(), _cpu()
    out: dict = {}
    code, error = 0, None
    s3 = _S3Lines(log)
    try:
        with s3:
            yield out
    except BaseException as err:
        told = disk_error(err) or err  # as the CLI tells it: a full disk is exit 3
        code = exit_code(told) if isinstance(told, (TilesError, sqlite3.DatabaseError)) else 1
        code = 130 if isinstance(err, KeyboardInterrupt) else code
        error = one_line(told)[:500]
        raise
    finally:
        summary = out.get("summary") or {}
        left = [d.get("nights_left") for d in (summary.get("stock") or {}).get("per_n", {}).values()]
        run = Run(
            day=day,
            host=host_name(),
            started=started,
            seconds=round(time.perf_counter() - t0, 3),
            cpu_seconds=round(_cpu() - cpu0, 3),
            exit=code,
            error=error,
            peak_rss_bytes=peak_rss_bytes(),  # the run's peak: its end, success or not
            s3_retries=s3.count,
            tiles=_tiles(library),
            library_bytes=library.stat().st_size if library.is_file() else None,
            stock_nights_left=min((x for x in left if x is not None), default=None),
        )
        if not append(library, run):
            log(f"could not add this run to {log_path(library)} (the disk full?)")
        if metrics_file is not None:
            from tilelib.fsio import atomic_write

            try:
                atomic_write(metrics_file, metrics(read(library) or [run]))
            except TilesError as err:
                log(f"could not write the metrics: {err}")


def _cpu() -> float:
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _tiles(library: Path) -> int | None:
    """The library's tile rows (None when it cannot be read: missing, locked, damaged)."""
    import sqlite3

    from tilelib.db import connect

    if not library.is_file():
        return None
    try:
        conn = connect(library, readonly=True, timeout=1)
        try:
            return int(conn.execute("SELECT count(*) FROM tiles").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return None
