"""Benchmark start-up: wall and CPU time of whole `tiles` processes, interleaved, with baselines from the same run.

Rows (each run R times, the commands interleaved round by round):
  python -c pass           the interpreter alone (the floor every command pays)
  tiles --help             the CLI built, plain help printed
  tiles solve --givens P   one 8x8 puzzle counted, solved and rated
  generate (process)       `tiles library generate --n N --count K` into a fresh library
  generate (in-process)    the same call's work inside one process, imports excluded
                           (``generator.batch.append_generated`` timed by the child itself)
The issue's targets: help and solve < 0.25 s; whole-process generate within 1.5x of in-process.

Installs. "editable" is the venv this script runs in (`pip install -e .`: a setuptools
finder is imported by `site` at every start). ``--wheel`` also builds the project as a
wheel into a temporary venv (its dependencies reached through a .pth file pointing at this
venv's site-packages, so nothing is downloaded but the build backend) and times that
install in the same rounds: no editable finder, and pip has compiled every module.
``--baseline DIR`` also times a checkout of the code before (``git worktree add DIR COMMIT``, its
C extensions built or copied in) in the same rounds, against this checkout launched the same
way: ``python -m tiles_cli.app`` with the checkout as working directory (first on sys.path), so
both pay the same editable finder and only the code differs.

Bytecode. Children run without PYTHONDONTWRITEBYTECODE (a normal shell does not set it;
with it, every start recompiles the project's modules from source, ~20 ms) and one
warm-up round runs first, so both installs start from cached bytecode. ``--keep-env``
passes the environment through unchanged.

Wall time shows load from other jobs, CPU time (the children's user + sys, from
``getrusage``) much less: the script prints `uptime` and both ratios.

Usage: .venv/bin/python scripts/bench_startup.py [--runs R] [--n N] [--count K] [--wheel] [--keep-env]
                                                [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUZZLE = "01..10..0.1..0..1..0..1.0...1..0..1..01..0...1..01..1..0..1..0.."  # 8x8
SEED = "ab" * 32

IN_PROCESS = """
import sys, time
from generator.batch import append_generated
from generator.make import GenParams
t0, c0 = time.perf_counter(), time.process_time()
append_generated(sys.argv[1], GenParams.make(int(sys.argv[2])), int(sys.argv[3]), bytes.fromhex(sys.argv[4]))
print(time.perf_counter() - t0, time.process_time() - c0)
"""


def tiles_exe(python: str) -> str:
    exe = Path(python).with_name("tiles")
    return str(exe) if exe.exists() else "tiles"


def run(cmd: list[str], env: dict, cwd: str | None = None) -> tuple[float, float, str]:
    """(wall s, child CPU s, stdout) of one whole process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(
        cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True, cwd=cwd
    )
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), out.stdout


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
    return f"{statistics.median(xs):.3f} | {p99:.3f} | {xs[-1]:.3f}"


def build_wheel_venv(tmp: str) -> str:
    """A venv holding a wheel (non-editable) install of this project; returns its python."""
    dist, venv = os.path.join(tmp, "dist"), os.path.join(tmp, "venv")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist, str(ROOT)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    purelib = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    wheel = next(Path(dist).glob("*.whl"))  # tiles_takuzu-<version>-…whl
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", py, "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return py


def one_round(label: str, py: str, a, tmp: str, r: int, env: dict, rows: dict, cwd: str | None = None) -> None:
    """Time every command once with interpreter ``py``; append (wall, cpu) pairs to ``rows``. With
    ``cwd`` (a checkout), ``tiles`` is ``python -m tiles_cli.app`` run there."""
    tiles = [tiles_exe(py)] if cwd is None else [py, "-m", "tiles_cli.app"]
    gen = f"generate n={a.n} x{a.count}"

    def add(key: str, wall: float, cpu: float) -> None:
        rows.setdefault(f"{label}: {key}", []).append((wall, cpu))

    add("python -c pass", *run([py, "-c", "pass"], env, cwd)[:2])
    add("tiles --help", *run([*tiles, "--help"], env, cwd)[:2])
    add("tiles solve (one 8x8)", *run([*tiles, "solve", "--givens", PUZZLE], env, cwd)[:2])
    lib = os.path.join(tmp, f"{label}-p{r}.sqlite")
    add(
        f"{gen} (process)",
        *run(
            [*tiles, "library", "generate", "--n", str(a.n), "--count", str(a.count), "--seed", SEED, "-L", lib],
            env,
            cwd,
        )[:2],
    )
    lib2 = os.path.join(tmp, f"{label}-i{r}.sqlite")
    _, _, out = run([py, "-c", IN_PROCESS, lib2, str(a.n), str(a.count), SEED], env, cwd)
    wall, cpu = map(float, out.split())
    add(f"{gen} (in-process, imports excluded)", wall, cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--wheel", action="store_true", help="also time a wheel (non-editable) install")
    ap.add_argument("--keep-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if set")
    ap.add_argument("--baseline", help="a checkout of the code before, timed in the same rounds")
    a = ap.parse_args()
    env = dict(os.environ)
    if not a.keep_env:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    rows: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        installs = [("editable", sys.executable, None)]
        if a.wheel:
            installs.append(("wheel", build_wheel_venv(tmp), None))
        if a.baseline:
            installs += [("this (-m)", sys.executable, str(ROOT)), ("baseline (-m)", sys.executable, a.baseline)]
        for label, py, cwd in installs:  # warm-up: bytecode caches, page cache
            one_round(label, py, a, tmp, -1, env, {}, cwd)
        for r in range(a.runs):
            for label, py, cwd in installs[r % len(installs) :] + installs[: r % len(installs)]:
                one_round(label, py, a, tmp, r, env, rows, cwd)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(
        f"{a.runs} interleaved runs; PYTHONDONTWRITEBYTECODE "
        f"{'as given' if a.keep_env else 'unset'}; uptime at the end: {load}\n"
    )
    print("| command | wall median s | p99 | max | CPU median s | p99 | max |")
    print("|---|---|---|---|---|---|---|")
    for k, xs in rows.items():
        print(f"| {k} | {stats([w for w, _ in xs])} | {stats([c for _, c in xs])} |")
    print()
    if a.baseline:
        for key in ("tiles --help", "tiles solve (one 8x8)"):
            this, base = rows[f"this (-m): {key}"], rows[f"baseline (-m): {key}"]
            for i, what in ((0, "wall"), (1, "CPU")):
                ratio = statistics.median(x[i] for x in this) / statistics.median(x[i] for x in base)
                print(f"{key}, this / baseline, {what} medians: {ratio:.3f}")
        floor = statistics.median(w for w, _ in rows["this (-m): python -c pass"])
        helpw = statistics.median(w for w, _ in rows["this (-m): tiles --help"])
        print(f"tiles --help over python -c pass (this, wall medians): +{helpw - floor:.3f} s")
    for label, _, _ in installs:
        proc = [v for k, v in rows.items() if k.startswith(label + ":") and k.endswith("(process)")][0]
        inp = [v for k, v in rows.items() if k.startswith(label + ":") and "in-process" in k][0]
        for i, what in ((0, "wall"), (1, "CPU")):
            ratio = statistics.median(x[i] for x in proc) / statistics.median(x[i] for x in inp)
            print(f"{label}: whole-process / in-process generate, {what} medians: {ratio:.2f}")


if __name__ == "__main__":
    main()
