"""The set-ups ``scripts/bench_serve.py`` measures, each started fresh (a new runs database, new
processes) and stopped after its run, and the faults it injects into them under load.

- ``sqlite``: one ``tiles referee serve`` process, one worker, over a SQLite runs file;
- ``pg1``, ``pg2``: one serve command with 1 or 2 uvicorn workers over a throwaway PostgreSQL on
  loopback (the tests' ``pg_support.Cluster``);
- ``proxy``: two serve processes (two hosts, as two machines would run them; ``--proxy-workers``
  each) over one PostgreSQL, behind Debian's nginx on loopback with TLS (a self-signed certificate
  made with openssl), the site ``deploy/nginx.conf`` filled in as the proxy test fills it
  (``serve_support.nginx_proxy``) inside a main configuration sized for hundreds of players.

Faults (``Service.fault``): ``kill-worker`` (SIGKILL to one uvicorn worker; its supervisor starts
another), ``restart-db`` (PostgreSQL stopped in ``immediate`` mode, a crash, and started again),
``kill-host`` (SIGKILL to one host's whole process group: a machine gone; nginx sends its requests to
the other) and ``drop`` (players go away mid-request: ``loadgen``'s drop rate, for a while).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "tests"))  # pg_support, serve_support

from serve_support import worker_pids  # noqa: E402
from serving import free_port  # noqa: E402  (scripts/serving.py)

SETUPS = ("sqlite", "pg1", "pg2", "proxy")
FAULTS = {"kill-worker": "pg2", "restart-db": "pg2", "kill-host": "proxy", "drop": "pg2"}  # fault -> set-up
NGINX_TEMPLATE = ROOT / "deploy" / "nginx.conf"
QUOTAS_OFF = ("--quota-runs", "0", "--quota-moves", "0", "--quota-address-moves", "0")


def describe(name: str, proxy_workers: int = 1) -> str:
    return {
        "sqlite": "SQLite, 1 worker",
        "pg1": "PostgreSQL, 1 worker",
        "pg2": "PostgreSQL, 2 workers",
        "proxy": f"2 hosts x {proxy_workers} worker(s), nginx TLS, PostgreSQL",
    }[name]


def why_not(name: str) -> str | None:
    """None if set-up ``name`` can run here, else why not (one line)."""
    if name != "sqlite":
        import pg_support

        if (why := pg_support.why_not()) is not None:
            return why
    if name == "proxy":
        if not NGINX_TEMPLATE.exists():
            return f"{NGINX_TEMPLATE.relative_to(ROOT)} is not in this checkout"
        import serve_support

        if not hasattr(serve_support, "self_signed"):
            return "tests/serve_support.py has no self_signed in this checkout"
        if not nginx_bin():
            return "nginx is not installed (apt-get install nginx-light)"
        if not shutil.which("openssl"):
            return "openssl is not installed"
    return None


def nginx_bin() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)


@dataclass
class Host:
    """One serve process (a host): its Popen and port."""

    proc: subprocess.Popen
    port: int
    log: Path
    alive: bool = True


@dataclass
class Service:
    """A running set-up: where players connect (``host``, ``port``, ``tls``), the runs database
    (``target``), the processes (``hosts``; ``nginx``), and a PostgreSQL ``cluster`` if any."""

    name: str
    work: Path
    target: object
    hosts: list = field(default_factory=list)
    cluster: object = None
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)  # nginx, when proxied
    port: int = 0
    tls: ssl.SSLContext | None = None
    cert: Path | None = None
    ready_s: float = 0.0

    @property
    def base(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    # ------------------------------------------------------------ processes and memory

    def pids(self) -> list[tuple[str, int]]:
        """(label, pid) of every serve process: each host's command, then its workers."""
        out = []
        for i, h in enumerate(self.hosts):
            if not h.alive or h.proc.poll() is not None:
                continue
            tag = f"h{i + 1}." if len(self.hosts) > 1 else ""
            out.append((f"{tag}cmd", h.proc.pid))
            out += [(f"{tag}w{j + 1}", p) for j, p in enumerate(worker_pids(h.proc.pid))]
        return out

    def cpu(self) -> tuple[float, float]:
        """CPU seconds used so far by (the serve processes, this machine's PostgreSQL processes): read
        before and after a load, their difference over its wall time says how busy each side was."""

        def used(pid: int) -> float:
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    f = fh.read().rsplit(")", 1)[1].split()
                return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
            except (OSError, IndexError, ValueError):
                return 0.0

        serve = sum(used(pid) for _label, pid in self.pids())
        pg = 0.0
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/comm") as fh:
                        if fh.read().strip() == "postgres":
                            pg += used(int(d))
                except OSError:
                    pass
        return serve, pg

    def rss(self) -> list[tuple[str, float]]:
        """(label, RSS MB) of every serve process now (a process gone in between is left out)."""
        out = []
        for label, pid in self.pids():
            try:
                with open(f"/proc/{pid}/status") as fh:
                    out.append((label, next(int(x.split()[1]) for x in fh if x.startswith("VmRSS:")) / 1024))
            except (OSError, StopIteration):
                pass
        return out

    def stop(self) -> None:
        for h in self.hosts:
            if h.proc.poll() is None:
                h.proc.send_signal(signal.SIGINT)
        for h in self.hosts:
            try:
                h.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(h.proc.pid, signal.SIGKILL)
                h.proc.wait()
        self.stack.close()

    def cleanup(self) -> None:
        """After ``stop`` and the audit: the PostgreSQL cluster goes."""
        if self.cluster is not None:
            self.cluster.cleanup()

    # ------------------------------------------------------------ faults

    def kill_worker(self) -> str:
        """SIGKILL one worker of the first host; returns how long until its supervisor had replaced it."""
        h = self.hosts[0]
        before = worker_pids(h.proc.pid)
        if not before:
            return "no worker to kill (one worker runs in the command's own process)"
        os.kill(before[0], signal.SIGKILL)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30:
            now = worker_pids(h.proc.pid)
            if len(now) == len(before) and before[0] not in now:
                return f"worker {before[0]} killed, replaced in {time.monotonic() - t0:.2f} s"
            time.sleep(0.02)
        return f"worker {before[0]} killed, not replaced within 30 s"

    def restart_db(self) -> str:
        t0 = time.monotonic()
        self.cluster.restart("immediate")
        return f"PostgreSQL crashed (immediate) and started again in {time.monotonic() - t0:.2f} s"

    def kill_host(self) -> str:
        h = self.hosts[-1]
        os.killpg(h.proc.pid, signal.SIGKILL)
        h.proc.wait()
        h.alive = False
        return f"host {len(self.hosts)} (pid {h.proc.pid} and its workers) killed; the other serves on"


def _serve_cmd(lib: Path, target, manifest: Path, port: int, workers: int, quotas: bool, access_log: str) -> list:
    return [
        sys.executable,
        "-m",
        "tiles_cli.app",
        "referee",
        "serve",
        "-L",
        str(lib),
        "--runs",
        str(target),
        "--manifest",
        str(manifest),
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--access-log",
        access_log,
        *([] if quotas else QUOTAS_OFF),
    ]


def _wait_up(url: str, procs: list[Host], verify, timeout: float = 120) -> float:
    t0 = time.perf_counter()
    while True:
        for h in procs:
            if h.proc.poll() is not None:
                sys.exit(f"serve exited {h.proc.returncode}: {h.log.read_text()[-2000:]}")
        try:
            if httpx.get(url + "/api/v1/days", timeout=2, verify=verify).status_code == 200:
                return time.perf_counter() - t0
        except httpx.HTTPError:
            pass
        if time.perf_counter() - t0 > timeout:
            sys.exit(f"{url} did not come up in {timeout:.0f} s")
        time.sleep(0.1)


def start(
    name: str,
    work: Path,
    lib: Path,
    manifest: Path,
    *,
    quotas: bool = False,
    access_log: str = "off",
    proxy_workers: int = 1,
    durable: bool = False,
) -> Service:
    """Start set-up ``name`` (module doc) fresh in ``work``; returns it once it answers. ``durable``:
    PostgreSQL syncs each commit to the disk (fsync on), as a production server does; the tests'
    throwaway cluster does not."""
    work.mkdir(parents=True, exist_ok=True)
    cluster, target = None, work / "runs.sqlite"
    for p in work.glob("runs.sqlite*"):
        p.unlink()
    if name != "sqlite":
        import pg_support

        cluster = pg_support.Cluster(durable=durable).start()
        target = cluster.new_database("bench")
    svc = Service(name, work, target, cluster=cluster)
    workers, nhosts = {"sqlite": (1, 1), "pg1": (1, 1), "pg2": (2, 1), "proxy": (proxy_workers, 2)}[name]
    for i in range(nhosts):
        port = free_port()
        log = work / f"serve{i + 1}.log"
        with open(log, "w") as out:
            proc = subprocess.Popen(
                _serve_cmd(lib, target, manifest, port, workers, quotas, access_log),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        svc.hosts.append(Host(proc, port, log))
    try:
        if name == "proxy":
            for h in svc.hosts:
                _wait_up(f"http://127.0.0.1:{h.port}", [h], True)
            from serve_support import self_signed

            svc.cert, key = self_signed(work)
            svc.port = svc.stack.enter_context(nginx(work / "nginx", [h.port for h in svc.hosts], svc.cert, key))
            svc.tls = ssl.create_default_context(cafile=str(svc.cert))
            svc.ready_s = _wait_up(svc.base, svc.hosts, svc.tls)
        else:
            svc.port = svc.hosts[0].port
            svc.ready_s = _wait_up(svc.base, svc.hosts, True)
    except BaseException:
        svc.stop()
        svc.cleanup()
        raise
    return svc


@contextlib.contextmanager
def nginx(folder: Path, upstreams: list[int], cert: Path, key: Path):
    """Debian's nginx in the foreground on a free loopback port: the site ``deploy/nginx.conf`` with its
    ``${TILES_...}`` placeholders filled in (as ``serve_support.nginx_proxy`` does), included in a main
    configuration of our own: one worker per core and 4,096 connections each (the test's 256 would
    refuse players past ~128, each holding a connection in and one out). Yields the port."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    values = {
        "TILES_SERVER_NAME": "localhost",
        "TILES_LISTEN": f"127.0.0.1:{port}",
        "TILES_CERT": str(cert),
        "TILES_KEY": str(key),
        **{f"TILES_UPSTREAM_{i + 1}": f"127.0.0.1:{p}" for i, p in enumerate(upstreams)},
    }
    site = NGINX_TEMPLATE.read_text()
    for k, v in values.items():
        site = site.replace("${" + k + "}", v)
    (folder / "tiles.conf").write_text(site)
    temps = "".join(f"    {t}_temp_path {folder / t};\n" for t in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (folder / "nginx.conf").write_text(
        f"daemon off;\nworker_processes auto;\nworker_rlimit_nofile 16384;\npid {folder / 'nginx.pid'};\n"
        f"error_log {folder / 'error.log'} warn;\n"
        + ("user root;\n" if os.geteuid() == 0 else "")
        + f"events {{ worker_connections 4096; }}\nhttp {{\n    access_log off;\n{temps}"
        f"    include {folder / 'tiles.conf'};\n}}\n"
    )
    cmd = [nginx_bin(), "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(folder / "nginx.conf")]
    test = subprocess.run([*cmd, "-t"], capture_output=True, text=True, timeout=30)
    if test.returncode != 0:
        sys.exit(f"nginx refused its configuration: {test.stderr}")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGQUIT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
