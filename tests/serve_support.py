"""A real `tiles referee serve` on 127.0.0.1 for the API and browser tests: a subprocess on a free
port, waited for until it answers, stopped (and reaped) afterwards."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_pids(pid: int) -> list[int]:
    """The pids of the uvicorn workers a ``tiles referee serve --workers N`` process spawned (its
    children running multiprocessing's ``spawn_main``; not the resource tracker)."""
    out = subprocess.run(["ps", "-ww", "-o", "pid=,args=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if "spawn_main" in line]


@contextlib.contextmanager
def silent_port():
    """A port on 127.0.0.1 that accepts every connection and never says a word (a server hung at
    start-up); yields the port number, and closes everything afterwards."""
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        srv.close()


@contextlib.contextmanager
def serving(
    lib: Path, runs: Path | str, manifests: list[Path], *extra: str, timeout: float = 120.0, log: Path | None = None
):
    """Run the service over these manifests (none: the whole library); yield its base URL
    (http://127.0.0.1:PORT). ``runs``: a runs file, or a postgresql:// URL (then give ``log``)."""
    with service_process(lib, runs, manifests, *extra, timeout=timeout, log=log) as (_proc, base):
        yield base


@contextlib.contextmanager
def service_process(
    lib: Path, runs: Path | str, manifests: list[Path], *extra: str, timeout: float = 120.0, log: Path | None = None
):
    """``serving``, yielding (the process, its base URL); stopped with SIGINT unless already gone. The
    service's output goes to ``log`` (default: beside the runs file)."""
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "tiles_cli.app",
        "referee",
        "serve",
        "-L",
        str(lib),
        "--runs",
        str(runs),
        "--port",
        str(port),
        *[a for m in manifests for a in ("--manifest", str(m))],
        *extra,
    ]
    log_path = log if log is not None else Path(runs).with_suffix(".log")
    log = open(log_path, "w")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env={**os.environ})
    base = f"http://127.0.0.1:{port}"
    try:
        wait_up(proc, base, timeout, "serve", lambda: log_path.read_text())
        yield proc, base
    finally:
        stop(proc, signal.SIGINT, 15)
        log.close()


def start_players(sessions, label: str = "player"):
    """The solver agent playing each session in a thread of its own, started: (threads, results,
    errors) — results[k] is session k's ``PlayResult`` once its thread ends, errors one line per
    player that raised."""
    import threading

    from players import agents

    results, errors = [None] * len(sessions), []

    def go(k):
        try:
            results[k] = agents.play("solver", sessions[k], seed=k)
        except Exception as e:  # reported by the caller
            errors.append(f"{label} {k}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=go, args=(k,)) for k in range(len(sessions))]
    for t in threads:
        t.start()
    return threads, results, errors


def wait_up(proc: subprocess.Popen, base: str, timeout: float, name: str, log, verify=True) -> None:
    """Wait until ``base`` answers ``GET /api/v1/days`` with 200; RuntimeError (with ``log()``, its log's
    text) if ``proc`` exits first or ``timeout`` seconds pass."""
    t0 = time.monotonic()
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited {proc.returncode}: {log()}")
        try:
            if httpx.get(f"{base}/api/v1/days", verify=verify, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"{name} did not come up")
        time.sleep(0.1)


def stop(proc: subprocess.Popen, sig: int, grace: float) -> None:
    """Ask ``proc`` to stop with ``sig`` (unless it is gone), wait ``grace`` seconds, then kill it."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_in_page(page, expression: str, timeout: float = 30.0) -> None:
    """Wait until the JavaScript ``expression`` is truthy in a playwright ``page``. Playwright's own
    ``wait_for_function`` evaluates its expression with ``eval`` inside the page, which the service's
    Content-Security-Policy forbids (no 'unsafe-eval'); ``page.evaluate`` goes through the browser's
    debugging protocol, which no page policy governs."""
    t0 = time.monotonic()
    while not page.evaluate(expression):
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"not true after {timeout:.0f} s in the page: {expression}")
        time.sleep(0.05)


def board21_day(tmp_path_factory, name: str):
    """The shared G=21 fixture written as its own day's manifest file, and the truth over it:
    (fixture, folder, manifest path, a Judge whose ``truth(tile)`` is each tile's solution)."""
    from referee_support import board21

    from referee.board import build_board
    from referee.judge import Judge
    from tilelib.store import Library

    fx = board21(tmp_path_factory)
    d = tmp_path_factory.mktemp(name)
    (d / "day.json").write_text(fx.manifest.to_json())
    with Library.open(fx.lib_path) as lib:
        truth = Judge(fx.manifest, build_board(fx.manifest, lib), d / "unused.sqlite")
    return fx, d, d / "day.json", truth


@contextlib.contextmanager
def in_process_day21(tmp_path_factory, name: str):
    """The service over the G=21 day in this process, quotas off and no access log, as ``open_service``
    makes it for a worker: yields (app, store, truth); the store closed after."""
    import gc

    from referee.service.worker import ServeOptions, open_service

    fx, d, manifest, truth = board21_day(tmp_path_factory, name)
    opts = ServeOptions(
        library=str(fx.lib_path),
        runs=str(d / "runs.sqlite"),
        manifests=(str(manifest),),
        quota_runs=0,
        quota_moves=0,
        quota_address_moves=0,
        access_log="off",
    )
    app, store = open_service(opts, log=lambda _line: None)
    try:
        yield app, store, truth
    finally:
        store.close()
        gc.unfreeze()


def daily_day(tmp_path_factory, name: str, day: str, seed: bytes, size: int):
    """A real `tiles daily build` of a G=``size`` day on an empty library: (folder with lib.sqlite,
    manifest path)."""
    from daily.build import BuildOptions, build

    d = tmp_path_factory.mktemp(name)
    res = build(BuildOptions(day=day, library=d / "lib.sqlite", out_dir=d, size=size, seed=seed), log=lambda _l: None)
    return d, res.manifest_path


def judged_day(tmp_path_factory, name: str, day: str, seed: bytes, size: int):
    """``daily_day`` with its truth: (library, manifest path, a Judge over the board, the day's full
    reward)."""
    from referee.board import build_board
    from referee.judge import Judge
    from referee.manifest import from_json
    from tilelib.store import Library

    d, path = daily_day(tmp_path_factory, name, day, seed, size)
    m = from_json(path.read_text())
    with Library.open(d / "lib.sqlite") as lib:
        truth = Judge(m, build_board(m, lib), d / "unused.sqlite")
    return d / "lib.sqlite", path, truth, sum((s + 1) ** 2 for _x, _y, s in m.packing.squares)


def daily_g61(tmp_path_factory, name: str, day: str, seed: bytes):
    """``daily_day`` at G=61."""
    return daily_day(tmp_path_factory, name, day, seed, 61)


def replayed(truth, target, run: str) -> tuple[int, int, list[int]]:
    """(reward, moves, tiles scored) of ``run`` judged again, move by move, from its stored history in
    the runs database ``target``; each stored verdict must be the one the judging core gives again."""
    from pg_support import query_runs

    solved: set[int] = set()
    reward, scored = 0, []
    rows = query_runs(target, "SELECT tile, cells, correct, reward FROM moves WHERE run = ? ORDER BY id", (run,))
    for tile, cells, correct, stored in rows:
        v = truth.judge_move({"tile": tile, "cells": cells}, solved)
        assert (v["correct"], v["reward"]) == (bool(correct), stored), (run, tile)
        reward += v["reward"]
        scored += [tile] if v["correct"] else []
    return reward, len(rows), scored


NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)
NGINX_SITE = Path(__file__).resolve().parents[1] / "deploy" / "nginx.conf"


def need(tool: str | None, name: str) -> str:
    """``tool``'s path; without it skip locally with one line, fail under CI (CI=true)."""

    from needs import need as need_it

    need_it(None if tool is not None else f"{name} is not installed (apt-get install {name}, or run scripts/test.sh)")
    assert tool is not None
    return tool


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost (openssl): (cert.pem, key.pem)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            need(shutil.which("openssl"), "openssl"),
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@contextlib.contextmanager
def nginx_proxy(folder: Path, upstreams: list[str], cert: Path, key: Path, timeout: float = 30.0):
    """Debian's nginx in the foreground with ``deploy/nginx.conf`` filled in (TLS on 127.0.0.1 and a free
    port, ``upstreams`` host:port as its two hosts), pid, logs and temp files in ``folder``; yields
    its https:// base URL once it answers /api/v1/days, and stops it (SIGQUIT, then SIGKILL)."""
    import ssl

    exe = need(NGINX, "nginx")
    port = free_port()
    values = {
        "TILES_SERVER_NAME": "localhost",
        "TILES_LISTEN": f"127.0.0.1:{port}",
        "TILES_UPSTREAM_1": upstreams[0],
        "TILES_UPSTREAM_2": upstreams[1],
        "TILES_CERT": str(cert),
        "TILES_KEY": str(key),
    }
    site = NGINX_SITE.read_text()
    for k, v in values.items():
        site = site.replace("${" + k + "}", v)
    assert not [ln for ln in site.splitlines() if "${TILES_" in ln.split("#")[0]], "a placeholder left"
    (folder / "tiles.conf").write_text(site)
    temps = "\n".join(f"    {t}_temp_path {folder / t};" for t in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (folder / "nginx.conf").write_text(
        f"daemon off;\nworker_processes 1;\npid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'} info;\n"
        + ("user root;\n" if os.geteuid() == 0 else "")
        + f"events {{ worker_connections 256; }}\nhttp {{\n    access_log {folder / 'access.log'};\n{temps}\n"
        f"    include {folder / 'tiles.conf'};\n}}\n"
    )
    cmd = [exe, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(folder / "nginx.conf")]
    test = subprocess.run([*cmd, "-t"], capture_output=True, text=True, timeout=30)
    assert test.returncode == 0, test.stderr
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"https://127.0.0.1:{port}"
    ctx = ssl.create_default_context(cafile=str(cert))
    try:
        wait_up(proc, base, timeout, "nginx", lambda: (folder / "error.log").read_text()[-2000:], verify=ctx)
        yield base
    finally:
        stop(proc, signal.SIGQUIT, 10)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextlib.contextmanager
def chromium():
    """Debian's chromium driven by playwright (``scripts/test.sh`` installs it with apt); skipped
    locally without it, a failure under CI (CI=true), so a missing browser is never a silent pass."""

    need(CHROMIUM, "chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        br = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield br
        finally:
            br.close()


AXE_VERSION = "4.14.1"
# the registry's own integrity string for that version's tarball (npm view axe-core@4.14.1 dist.integrity)
AXE_INTEGRITY = "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="


def axe_source() -> str:
    """axe-core's browser build (``package/axe.min.js``) from the npm registry, the tarball checked
    against the integrity the registry publishes for it (pinned above), cached per user. Without the
    network and no cached copy: skip locally, fail under CI."""
    import base64
    import hashlib
    import io
    import tarfile

    from needs import need as need_it

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tiles-tests"
    js = cache / f"axe-core-{AXE_VERSION}.min.js"
    if js.is_file():
        return js.read_text()
    url = f"https://registry.npmjs.org/axe-core/-/axe-core-{AXE_VERSION}.tgz"
    try:
        data = httpx.get(url, timeout=120, follow_redirects=True).raise_for_status().content
    except httpx.HTTPError as err:
        need_it(f"axe-core could not be fetched from the npm registry ({err})")
    got = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    assert got == AXE_INTEGRITY, f"axe-core {AXE_VERSION}'s tarball is not the one the registry published"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        member = tar.extractfile("package/axe.min.js")
        assert member is not None
        text = member.read().decode()
    cache.mkdir(parents=True, exist_ok=True)
    tmp = js.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(js)
    return text
