"""A year of nights (issue 74): ``tiles daily build`` run night after night by two operator hosts
against a real S3 server on loopback (moto's, with conditional writes made atomic as S3's are)
through a proxy that injects faults (``scripts/fault_proxy.py``: connections reset mid-body, 500 and
503 SlowDown answers, stalls past the client's timeout), with a build killed by SIGKILL during its
push every ``--kill-every`` nights; every invariant is checked every night and the run stops at the
first one broken (exit 1, naming it).

    python scripts/bench_year.py                       # 365 nights at G = 301
    python scripts/bench_year.py --nights 30 --size 41 # the short form (tests/test_bench_year.py)

**The hosts.** ``a`` and ``b``, each with a working folder of its own (library, manifests' folder),
build on alternate nights, and both on the same night every ``--both-every`` nights (started
together). Each build is the whole command in a fresh interpreter, as cron runs it. A night that
fails (a fault the build could not ride out, a kill, a lost race) is built again by the same host,
as an operator would, until it succeeds (at most ``--tries`` times; more is a broken invariant).

**Every week** (``--weekly-every`` nights) the host that built runs the cron's weekly jobs: the
prune of the remote's snapshots (``--prune-keep 2``, no minimum age) through the faults, then the
full check of its library (``tiles library verify``); the auditor then checks that nothing pushed
is gone, and the replays after it show that every earlier day can still be rebuilt.

**Once a run**: the disk fills during a night's first build (a third of the way: no file may grow
past 16 KiB, so a write fails as on a full disk; the build must fail in one line, no traceback),
host ``b`` loses its library and the caches beside it (half-way: it re-clones by building), and
the key is rotated (two thirds of the way: a keyring, FORMAT §9, whose new key starts that night).

**The invariants**, checked after every night:

- the night's manifest verifies against the host's library and against the day's bundle written
  from it (what ``tiles referee verify`` and ``tiles daily bundle`` run, called in this process);
- every tile row any host ever pushed is in the remote's state as HEAD names it now: the bench
  keeps its own ledger of the row hashes of each host's library after each successful push, and
  its auditor reads HEAD and every object it names (the base and its deltas) straight from the
  server (no faults, no project code: boto3, sha256 and sqlite3), each object's content proved by
  its name, and finds every one of them there (a merge into a library of its own would keep a row
  the remote had lost);
- the spent rows of that state never lose one seen before, and no solution of side n >= 10 in
  them is on the boards of two days;
- a failed build leaves the remote's HEAD as it was, or (killed during its push, or its swap's
  answer lost to a reset after the server wrote it) at a state that holds every row of that
  build's library;
- the night succeeds within ``--tries`` builds, and the cron's stock top-up leaves no side n >= 10
  without unspent solutions;
- every ``--replay-every`` nights, a seeded earlier day replays byte for byte from its revealed
  seed (the key as it is now: across the rotation) and its start snapshot on the remote.

**What an operator watches**, one CSV row per night (``--csv``): the builds' wall and CPU time,
peak RSS, KiB up and down through the proxy, multipart uploads abandoned half-way (armed every
``--abandon-every`` nights: the next upload in parts, of 5 MiB here, ``TILES_S3_PART_MB``, is left
open), library rows and file size, what the remote stores, faults injected and retries logged,
builds it took, and what this process spent beside them (``bench_cpu_s``: the S3 server, the proxy and
the auditor; ``audit_s``: what the night waited for the checks, the manifests' run beside the stock's
top-up); ``--png`` draws time, memory, bytes and MiB stored against the night. A table of totals at the end.
Each host's builds say who they are (``TILES_HOST``), so the remote's HEAD names the host of its
last push.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import json
import logging
import os
import random
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the loopback S3 server the tests use (tests/s3_server.py)

from fault_proxy import KINDS, FaultProxy  # noqa: E402  (scripts/)

from daily.seed import KEYRING  # noqa: E402

BUCKET, PREFIX = "tiles-year", "lib"
SECRET = "bench-year-secret"
KEY = "testing"


class Broken(Exception):
    """An invariant that does not hold: the run stops here."""


@dataclass
class Host:
    name: str
    folder: Path
    builds: int = 0

    @property
    def library(self) -> Path:
        return self.folder / "tiles.sqlite"

    @property
    def out(self) -> Path:
        return self.folder / "out"


@dataclass
class Audit:
    """What the bench itself keeps, outside the project: the ledger of row hashes pushed, the spent
    rows seen in the remote's state, and what each object of the remote holds (objects are named by
    their content, so each is read once)."""

    folder: Path
    ledger: set[str] = field(default_factory=set)
    spent_seen: set[tuple] = field(default_factory=set)
    days_of: dict[str, set[str]] = field(default_factory=dict)  # solution -> the days of the boards it is on
    objects: dict[str, tuple[frozenset, frozenset]] = field(default_factory=dict)
    seconds: float = 0.0  # wall time the nights waited for the checks (not the manifests' run beside the top-up)

    @contextmanager
    def timing(self) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.perf_counter() - t0

    @property
    def spent(self) -> int:
        return len(self.spent_seen)


def env_for(endpoint: str, secret: str = SECRET, host: str = "auditor") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TILES_", "AWS_"))}
    env.update(
        TILES_S3_ENDPOINT=endpoint,
        TILES_SECRET=secret,
        TILES_HOST=host,
        AWS_ACCESS_KEY_ID=KEY,
        AWS_SECRET_ACCESS_KEY=KEY,
        AWS_DEFAULT_REGION="us-east-1",
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        AWS_EC2_METADATA_DISABLED="true",
        PYTHONPATH=str(ROOT),
        TILES_S3_PART_MB="5",  # S3's smallest part: a library past 5 MiB goes up in parts
    )
    return env


def tiles(*args: str) -> list[str]:
    return [sys.executable, "-m", "tiles_cli.app", *args]


def build_cmd(host: Host, day: str, size: int) -> list[str]:
    return tiles(
        "daily", "build", "--date", day, "--size", str(size), "--library", str(host.library),
        "--out", str(host.out), "--remote", f"s3://{BUCKET}/{PREFIX}", "--json",
    )  # fmt: skip


def top_up(host: Host, env: dict, tries: int) -> tuple[int, str]:
    """The cron's second job after a built night: ``tiles library generate --stock`` (local), then
    ``tiles library push`` through the faults, pushed again as an operator would until it succeeds
    (at most ``tries`` times). (pushes it took, their stderr)."""
    env = {**env, "TILES_HOST": host.name}
    gen = subprocess.run(
        tiles("library", "generate", "--stock", "--nights", "3", "--workers", "1", "--library", str(host.library)),
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    if gen.returncode != 0:
        raise Broken(f"host {host.name}: generate --stock failed (exit {gen.returncode}): {gen.stderr[-400:]}")
    err = ""
    for k in range(1, tries + 1):
        push = subprocess.run(
            tiles("library", "push", "--library", str(host.library), "--remote", f"s3://{BUCKET}/{PREFIX}"),
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        err += push.stderr
        if push.returncode == 0:
            return k, err
    raise Broken(f"host {host.name}: the stock's push did not succeed in {tries} tries: {err[-400:]}")


# The auditor's own reads run in this process, by the functions the commands call (``tiles library
# stock``, ``tiles referee verify``, ``tiles daily bundle``, ``tiles library pull``): what the
# hosts run is whole commands, what checks them need not pay an interpreter's start-up each time.


def weekly(host: Host, env: dict, tries: int) -> tuple[int, str, str]:
    """The cron's weekly jobs on the host that built tonight: prune the remote's snapshots (keep 2,
    and here no minimum age: the harshest) through the faults, run again until it succeeds as an
    operator would (at most ``tries`` times), then the full check of the local library. (runs it
    took, the prune's summary line, its stderr)."""
    env = {**env, "TILES_HOST": host.name}
    err, runs = "", 0
    for runs in range(1, tries + 1):  # noqa: B007 (the count is returned)
        r = subprocess.run(
            tiles("library", "snapshots", "--prune-keep", "2", "--min-age", "0", "--library", str(host.library),
                  "--remote", f"s3://{BUCKET}/{PREFIX}"),
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        err += r.stderr
        if r.returncode == 0:
            break
    else:
        raise Broken(f"host {host.name}: the weekly prune did not succeed in {tries} tries: {err[-400:]}")
    v = subprocess.run(
        tiles("library", "verify", "--library", str(host.library)), env=env, capture_output=True, text=True
    )
    if v.returncode != 0:
        raise Broken(f"host {host.name}: the weekly full check failed: {v.stdout[-300:]}{v.stderr[-300:]}")
    return runs, r.stdout.strip(), err


def remote_bytes(s3) -> int:
    """What the remote stores: the bytes of every object under the prefix."""
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=f"{PREFIX}/")
    return sum(o["Size"] for page in pages for o in page.get("Contents", []))


def dry(host: Host) -> list[int]:
    """The sides n >= 10 whose stock of unspent solutions is empty in the host's library."""
    from tilelib import stock
    from tilelib.store import Library

    with Library.open(host.library) as lib:
        rep = stock.report(lib.conn, host.library, 7)
    return [int(n) for n, d in rep["per_n"].items() if not d["unspent"]]


def verify_night(host: Host, day: str) -> None:
    """The night's manifest file verifies against the host's library, and against the day's bundle
    written from it (what a player of a finished day verifies with)."""
    from referee.bundle import write_bundle
    from referee.manifest import load
    from referee.verify import verify
    from tilelib.store import Library

    m = load(host.out / f"{day}.json")
    bundle = host.folder / "bundle.sqlite"
    try:
        with Library.open(host.library) as lib:
            verify(m, lib, None)
            write_bundle(lib, day, bundle)
        with Library.open(bundle) as b:
            if "from its bundle" not in verify(m, b, None).line():
                raise Broken(f"{day} host {host.name}: the bundle was not read as a bundle")
    except Exception as err:  # noqa: BLE001 (any failure of the check is the invariant broken)
        if isinstance(err, Broken):
            raise
        raise Broken(f"{day} host {host.name}: its manifest does not verify: {err}") from err
    finally:
        bundle.unlink(missing_ok=True)


def remote_state(audit: Audit, s3, day: str) -> tuple[set[str], set[tuple]]:
    """(tile hashes, spent rows) of the state HEAD names on the server: its base snapshot and its
    deltas, each read once (sha256 of the bytes must be its name), the union of their rows."""
    body = head(s3)
    if body is None:
        return set(), set()
    doc = json.loads(body)
    shas = [doc["snapshot"], *(d["sha"] for d in doc.get("deltas", []))]
    tiles: set[str] = set()
    spent: set[tuple] = set()
    for sha in shas:
        if sha not in audit.objects:
            data = s3.get_object(Bucket=BUCKET, Key=f"{PREFIX}/snapshots/{sha}.sqlite")["Body"].read()
            if hashlib.sha256(data).hexdigest() != sha:
                raise Broken(f"{day}: the remote's object {sha[:12]}… is not what its name says")
            path = audit.folder / "object.sqlite"
            path.write_bytes(data)
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                held = frozenset(r[0] for r in db.execute("SELECT hash FROM tiles"))
                paid = frozenset(db.execute("SELECT solution, board, n, day FROM spent"))
            path.unlink()
            audit.objects[sha] = (held, paid)
        tiles |= audit.objects[sha][0]
        spent |= audit.objects[sha][1]
    for gone in set(audit.objects) - set(shas):  # no longer in HEAD's state: read again if it returns
        del audit.objects[gone]
    return tiles, spent


def replay(hosts: list[Host], day0: dt.date, upto: int, env: dict, seed: int) -> None:
    """A seeded earlier day, from the host that built it: its seed revealed from the key as it is
    now (a rotation since must not have moved it) and the whole build rerun from its start snapshot
    on the remote, which must give the board byte for byte (``tiles referee verify --replay``)."""
    k = random.Random(f"{seed}/{upto}").randrange(upto + 1)
    day = (day0 + dt.timedelta(days=k)).isoformat()
    for h in hosts:
        manifest = h.out / f"{day}.json"
        if not manifest.is_file():
            continue
        seed_hex = subprocess.run(
            tiles("daily", "reveal", "--date", day, "--force"), env=env, capture_output=True, text=True
        )
        if seed_hex.returncode != 0:
            raise Broken(f"{day}: its seed cannot be revealed: {seed_hex.stderr[-300:]}")
        r = subprocess.run(
            tiles("referee", "verify", str(manifest), "--library", str(h.library), "--seed", seed_hex.stdout.strip(),
                  "--replay", "--remote", f"s3://{BUCKET}/{PREFIX}"),
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        if r.returncode != 0:
            raise Broken(f"{day} (host {h.name}): does not replay byte for byte: {r.stdout[-300:]}{r.stderr[-500:]}")
        return
    raise Broken(f"{day}: no host holds its manifest")


def head(s3) -> bytes | None:
    """The remote's HEAD object as it is on the server (None before the first push)."""
    try:
        return s3.get_object(Bucket=BUCKET, Key=f"{PREFIX}/HEAD.json")["Body"].read()
    except s3.exceptions.NoSuchKey:
        return None


def rows(library: Path, table: str, column: str) -> set[str]:
    with sqlite3.connect(f"file:{library}?mode=ro", uri=True) as db:
        return {str(r[0]) for r in db.execute(f"SELECT {column} FROM {table}")}  # noqa: S608 (our names)


def count_rows(library: Path) -> int:
    with sqlite3.connect(f"file:{library}?mode=ro", uri=True) as db:
        return int(db.execute("SELECT count(*) FROM tiles").fetchone()[0])


def retries(stderr: str) -> int:
    return sum(1 for line in stderr.splitlines() if "s3: " in line and " attempt " in line)


def _disk_of(limit: int):
    """A child's pre-exec: files it writes may not grow past ``limit`` bytes (a write past it fails
    with EFBIG, as one on a full disk fails with ENOSPC), the signal that would kill it ignored."""

    def pre() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return pre


def run_builds(
    hosts: list[Host], day: str, size: int, env: dict, proxy: FaultProxy, kill: int, disk: int = 0
) -> list[tuple[Host, int, str, str]]:
    """Start one build per host at once; (host, exit, stdout, stderr) each. With ``kill`` > 0, the
    first build is SIGKILLed when the proxy receives its ``kill``-th PUT of HEAD.json (1: the first
    swap, whose request still reaches the server) or, with ``kill`` < 0, its first PUT of anything
    else (a snapshot or delta upload: the swap never happens). With ``disk``, no file the builds write
    may grow past ``disk`` bytes (the full disk)."""
    procs = []
    for h in hosts:
        h.out.mkdir(parents=True, exist_ok=True)
        cmd = build_cmd(h, day, size)
        pre = _disk_of(disk) if disk else None
        procs.append(
            (
                h,
                subprocess.Popen(
                    cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=pre
                ),
            )
        )
    if kill:
        victim, seen = procs[0][1], Counter()

        def hook(method: str, path: str) -> None:
            if method != "PUT":
                return
            what = "head" if path.split("?")[0].endswith("/HEAD.json") else "data"
            seen[what] += 1
            if (kill > 0 and what == "head" and seen[what] == kill) or (
                kill < 0 and what == "data" and seen[what] == 1
            ):
                victim.send_signal(signal.SIGKILL)

        proxy.hook = hook
    try:
        out = []
        for h, p in procs:
            so, se = p.communicate()
            out.append((h, p.returncode, so, se))
            h.builds += 1
        return out
    finally:
        proxy.hook = None


def check_night(audit: Audit, s3, before: bytes | None, results, day: str, built: bool = True) -> None:
    """The remote's invariants (module doc) after one round of builds (or of the stock's pushes:
    ``built`` False, no HEAD to compare). The night's manifests are ``verify_night``'s, which the
    caller runs beside the stock's top-up."""
    codes = [code for _h, code, _o, _e in results]
    # A failed build leaves HEAD as it was, unless its swap reached the server and only the answer
    # was lost (a reset after the write): then HEAD is the whole state its push made, every row of
    # its library on the remote (checked below, after the auditor's pull) — never a half state.
    landed = built and 0 not in codes and -signal.SIGKILL not in codes and head(s3) != before
    for h, code, _so, _err in results:
        if code == 0:
            audit.ledger |= rows(h.library, "tiles", "hash")
    have, spent = remote_state(audit, s3, day)
    if landed:
        missing = {x for h, _c, _o, _e in results for x in rows(h.library, "tiles", "hash") - have}
        if missing:
            raise Broken(f"{day}: a failed build (exits {codes}) changed HEAD to a state without its own rows")
    lost = audit.ledger - have
    if lost:
        raise Broken(f"{day}: {len(lost)} pushed row(s) are not on the remote, e.g. {sorted(lost)[0]}")
    check_spent(audit, spent, day)


def check_spent(audit: Audit, spent: set[tuple], day: str) -> None:
    """The remote state's spent rows (solution, board, n, day) keep every row seen before, and no
    solution is on two days' boards."""
    lost = audit.spent_seen - spent
    if lost:
        raise Broken(f"{day}: {len(lost)} spent row(s) left the remote's ledger, e.g. {sorted(lost)[0]}")
    new = spent - audit.spent_seen  # no row seen before has left, so only these can put a solution on a second day
    audit.spent_seen |= new
    for solution, _board, _n, when in new:
        audit.days_of.setdefault(solution, set()).add(when)
    twice = [(sol, sorted(audit.days_of[sol])) for sol in {r[0] for r in new} if len(audit.days_of[sol]) > 1]
    if twice:
        raise Broken(f"{day}: {len(twice)} solution(s) of side n >= 10 on two days' boards, e.g. {twice[0]}")


def save_csv(rows: list[dict], path: Path) -> None:
    """The nights so far as a CSV, written whole (a temp file, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    tmp.replace(path)


def draw(rows: list[dict], path: Path, size: int) -> None:
    """Four panels against the night: build wall and CPU seconds, peak RSS, KiB up and down, MiB the
    library file and the remote hold (matplotlib's Agg backend, as the analyzer draws)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    x = [r["night"] for r in rows]
    fig = Figure(figsize=(10, 8), dpi=100)
    panels = [
        ("seconds", [("wall_s", "wall"), ("cpu_s", "CPU"), ("bench_cpu_s", "bench's own CPU")]),
        ("peak RSS, MiB", [("peak_rss_mb", "largest build")]),
        ("KiB through the proxy", [("kb_up", "up"), ("kb_down", "down")]),
        ("MiB stored", [("library_mb", "library file"), ("remote_mb", "remote (every object)")]),
    ]
    for k, (title, series) in enumerate(panels):
        ax = fig.add_subplot(2, 2, k + 1)
        for key, label in (s for s in series if s[0] in rows[0]):  # a CSV of an earlier bench may lack one
            ax.plot(x, [r[key] for r in rows], label=label, linewidth=0.8)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("night")
        ax.legend(fontsize=8)
    fig.suptitle(f"{len(rows)} nights at G = {size}, two hosts, faults injected")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--size", type=int, default=301)
    ap.add_argument("--start", default="2027-01-01", help="The first night's date.")
    ap.add_argument("--seed", type=int, default=0, help="The fault proxy's seed.")
    ap.add_argument("--rate", type=float, default=0.02, help="Share of requests that get a fault.")
    ap.add_argument("--stall", type=float, default=7.0, help="Seconds a stall holds (the client's read timeout is 6).")
    ap.add_argument("--kill-every", type=int, default=30)
    ap.add_argument(
        "--abandon-every", type=int, default=40, help="Nights between multipart uploads abandoned half-way."
    )
    ap.add_argument("--both-every", type=int, default=11)
    ap.add_argument("--tries", type=int, default=4)
    ap.add_argument("--replay-every", type=int, default=5, help="Nights between replays of a seeded earlier day.")
    ap.add_argument(
        "--weekly-every", type=int, default=7, help="Nights between the cron's weekly prune and full check (0: never)."
    )
    ap.add_argument("--work", type=Path, default=None, help="Working folder (default: a temporary one).")
    ap.add_argument("--csv", type=Path, default=None, help="Write one row per night here.")
    ap.add_argument("--png", type=Path, default=None, help="Draw the year here: time, memory, bytes, library.")
    ap.add_argument("--draw-only", action="store_true", help="Draw --png from the nights in --csv, and stop.")
    a = ap.parse_args(argv)
    if a.draw_only:
        with a.csv.open() as f:
            drawn = [{k: (v if k in ("day", "hosts") else float(v)) for k, v in r.items()} for r in csv.DictReader(f)]
        draw(drawn, a.png, a.size)
        return 0
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    from s3_server import LinearizableMotoServer, client, free_port

    work = a.work or Path(tempfile.mkdtemp(prefix="tiles-year-"))
    port = free_port()
    server = LinearizableMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    upstream = f"http://127.0.0.1:{port}"
    s3 = client(upstream)
    s3.create_bucket(Bucket=BUCKET)
    hosts = [Host("a", work / "a"), Host("b", work / "b")]
    audit = Audit(work / "auditor")
    for f in (*[h.folder for h in hosts], audit.folder):
        f.mkdir(parents=True, exist_ok=True)
    direct = env_for(upstream)
    # the auditor's pulls in this process go straight to the server, as its commands did
    os.environ.update({k: v for k, v in direct.items() if k.startswith(("TILES_S3_", "AWS_"))})
    rows_out, totals = [], Counter()
    day0 = dt.date.fromisoformat(a.start)
    t_start = time.perf_counter()
    checker = ThreadPoolExecutor(1, thread_name_prefix="verify")
    try:
        with FaultProxy(upstream, seed=a.seed, rate=a.rate, stall=a.stall) as proxy:
            faulty = env_for(proxy.url)
            events = Counter()
            for i in range(a.nights):
                day = (day0 + dt.timedelta(days=i)).isoformat()
                if i == a.nights * 2 // 3:  # the key rotated: a keyring whose new key starts today
                    ring = f"{KEYRING}\n{a.start} {SECRET}\n{day} {SECRET}-rotated\n"
                    faulty, direct = env_for(proxy.url, ring), env_for(upstream, ring)
                    events["key rotated"] += 1
                if i == a.nights // 2:  # host b lost its library (and the caches beside it): it re-clones
                    for f in hosts[1].folder.glob("tiles.sqlite*"):
                        f.unlink()
                    events["library lost"] += 1
                full = i == a.nights // 3  # the disk fills during the first build of the night
                if a.abandon_every and i % a.abandon_every == a.abandon_every // 4:
                    proxy.abandon_next()  # the next upload in parts is left open half-way
                both = a.both_every and i % a.both_every == a.both_every // 2
                building = hosts if both else [hosts[i % 2]]
                kill = a.kill_every and i % a.kill_every == a.kill_every // 2
                faults0, req0, up0, down0 = Counter(proxy.counts), proxy.requests, proxy.bytes_up, proxy.bytes_down
                ru0, me0, audit0 = (
                    resource.getrusage(resource.RUSAGE_CHILDREN),
                    resource.getrusage(resource.RUSAGE_SELF),
                    audit.seconds,
                )
                t0 = time.perf_counter()
                builds, rss, retried, ok, killed = 0, 0, 0, set(), 0
                pending = list(building)
                for attempt in range(a.tries):
                    before = head(s3)
                    how = (1 if (i // a.kill_every) % 2 else -1) if kill and attempt == 0 else 0
                    disk = 16 * 1024 if full and attempt == 0 else 0
                    results = run_builds(pending, day, a.size, faulty, proxy, how, disk)
                    if disk:
                        events["disk full"] += sum(
                            1 for _h, code, _o, _e in results if code not in (0, -signal.SIGKILL)
                        )
                        for h, code, _o, err in results:
                            if code != 0 and "Traceback" in err:
                                raise Broken(
                                    f"{day} host {h.name}: a full disk is a traceback, not one line: {err[-800:]}"
                                )
                    killed += sum(1 for _h, code, _o, _e in results if code == -signal.SIGKILL)
                    builds += len(results)
                    with audit.timing():
                        check_night(audit, s3, before, results, day)
                    for h, code, so, err in results:
                        retried += retries(err)
                        if code == 0:
                            ok.add(h.name)
                            rss = max(rss, json.loads(so).get("peak_rss_bytes", 0))
                        else:
                            totals[f"exit {code}"] += 1
                    pending = [h for h in pending if h.name not in ok]
                    if not pending:
                        break
                else:
                    raise Broken(f"{day}: host(s) {[h.name for h in pending]} did not build in {a.tries} tries")
                # the night's manifests verified here while the stock's top-up runs its commands: the
                # checks on this process's core, the top-up on the other; a Broken stops the run below
                checking = checker.submit(lambda hs=building, d=day: [verify_night(h, d) for h in hs])
                for h in building:
                    pushes, err = top_up(h, faulty, a.tries)
                    builds, retried = builds + pushes, retried + retries(err)
                    with audit.timing():
                        empty = dry(h)
                    if empty:
                        raise Broken(f"{day} host {h.name}: the stock ran dry for n = {empty}")
                with audit.timing():
                    checking.result()
                    check_night(audit, s3, None, [(h, 0, "", "") for h in building], day, built=False)
                if a.weekly_every and i % a.weekly_every == a.weekly_every - 1:
                    runs, line, err = weekly(building[0], faulty, a.tries)
                    builds, retried = builds + runs, retried + retries(err)
                    with audit.timing():
                        check_night(audit, s3, None, [], day, built=False)  # nothing pushed is gone
                    events["weekly prunes"] += 1
                    print(f"  weekly ({building[0].name}): {line}", flush=True)
                if i % a.replay_every == a.replay_every - 1:
                    replay(hosts, day0, i, direct, a.seed)
                    events["replays"] += 1
                ru1, me1 = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
                new_faults = Counter(proxy.counts)
                new_faults.subtract(faults0)
                totals.update(+new_faults)
                lib = building[0].library
                row = {
                    "night": i + 1,
                    "day": day,
                    "hosts": "+".join(h.name for h in building),
                    "builds": builds,
                    "killed": killed,
                    "wall_s": round(time.perf_counter() - t0, 2),
                    "cpu_s": round(ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime, 2),
                    # this process: the S3 server, the proxy, the auditor; audit_s: what the night waited for its checks
                    "bench_cpu_s": round(me1.ru_utime + me1.ru_stime - me0.ru_utime - me0.ru_stime, 2),
                    "audit_s": round(audit.seconds - audit0, 2),
                    "peak_rss_mb": round(rss / 2**20, 1),
                    "requests": proxy.requests - req0,
                    "kb_up": round((proxy.bytes_up - up0) / 1024, 1),
                    "kb_down": round((proxy.bytes_down - down0) / 1024, 1),
                    **{k: new_faults.get(k, 0) for k in (*KINDS, "abandon_multipart")},
                    "retries_logged": retried,
                    "library_rows": count_rows(lib),
                    "library_mb": round(lib.stat().st_size / 2**20, 2),
                    "remote_mb": round(remote_bytes(s3) / 2**20, 2),
                    "spent": audit.spent,
                    "ledger": len(audit.ledger),
                }
                rows_out.append(row)
                if a.csv is not None:  # written night by night: a run cut short keeps what it measured
                    save_csv(rows_out, a.csv)
                totals["builds"] += builds
                totals["killed"] += killed
                print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    except Broken as err:
        print(f"bench_year: BROKEN: {err}", file=sys.stderr)
        return 1
    finally:
        checker.shutdown(cancel_futures=True)
        server.stop()
    totals.update(events)
    if a.png is not None:
        draw(rows_out, a.png, a.size)
    took = time.perf_counter() - t_start
    print(f"\n{a.nights} nights at G = {a.size} in {took:.0f} s; every invariant held")
    print("| what | total |\n|---|---|")
    for k, v in sorted(totals.items()):
        print(f"| {k} | {v} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
