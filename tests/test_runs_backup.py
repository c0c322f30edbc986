"""Backups of the runs database taken while the service writes it, and the restore drill of
docs/DEPLOY.md performed for real: ``tiles referee backup`` (SQLite's online backup of a runs file;
``pg_dump --format=custom`` of a PostgreSQL database) while a player is mid-run, then restored into a
fresh file (a copy) or a fresh database (``pg_restore``). Every run finished before the backup scores
the same on the restored database (``tiles referee score``, ``read_scores``); the run that was being
played is there as a consistent prefix — its stored moves judged again give its stored score — and
its player, holding its token, finishes it on a service over the restored database. A backup onto an
existing file is refused with one line, exit 2, and the file is left as it was.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time

import pytest
from cli_support import run_tiles
from pg_support import query_runs
from serve_support import daily_day, free_port, replayed, service_process

from players import agents
from players.client import Client
from players.sessions import HttpSession
from referee.board import build_board
from referee.judge import Judge
from referee.manifest import from_json
from referee.runsdb import is_url
from referee.service.runs import read_scores
from tilelib.store import Library

DAY = "2026-12-03"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def day121(tmp_path_factory):
    """(library, manifest path, the truth as a Judge, the day's full reward)."""
    d, path = daily_day(tmp_path_factory, "backup121", DAY, bytes.fromhex("7e" * 32), 121)
    m = from_json(path.read_text())
    with Library.open(d / "lib.sqlite") as lib:
        truth = Judge(m, build_board(m, lib), d / "unused.sqlite")
    return d / "lib.sqlite", path, truth, sum((s + 1) ** 2 for _x, _y, s in m.packing.squares)


def restore(backup, target, tmp_path, pg_cluster=None):
    """The restore of DEPLOY's drill: a SQLite backup copied to a fresh runs file; a pg_dump archive
    loaded with pg_restore into a fresh, empty database. The restored target."""
    if not is_url(target):
        fresh = tmp_path / "restored.sqlite"
        shutil.copyfile(backup, fresh)
        return fresh
    fresh = pg_cluster.new_database("restored")
    r = subprocess.run(
        [shutil.which("pg_restore"), "--no-owner", "--exit-on-error", "--dbname", fresh, str(backup)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return fresh


def nmoves(target, run) -> int:
    return query_runs(target, "SELECT nmoves FROM runs WHERE run = ?", (run,))[0][0]


def test_a_backup_taken_mid_play_restores_every_score(day121, runs_target, tmp_path, request):
    lib, manifest, truth, full = day121
    tiles = len(truth.board.squares)
    backup = tmp_path / ("runs.dump" if is_url(runs_target) else "runs-backup.sqlite")
    log = tmp_path / "serve.log"
    with service_process(lib, runs_target, [manifest], log=log) as (_proc, base):
        with Client(base) as c:
            for k in range(2):  # two runs finished before the backup
                assert agents.play("solver", HttpSession(c, DAY, player=f"done{k}")).reward == full
        player = Client(base, retries=8)
        backed_up = threading.Event()

        class Enough(Exception):
            pass

        class Live(HttpSession):  # writes one move a request until the backup is done, then stops:
            def submit(self, moves):  # the rest of the run is played after the restore
                if backed_up.is_set():
                    raise Enough
                return super().submit(moves)

        live = Live(player, DAY, player="live", max_moves=1)
        finished, errors = [], []

        def go():
            try:
                finished.append(agents.play("solver", live))
            except Enough:
                pass
            except Exception as e:  # reported below
                errors.append(f"{type(e).__name__}: {e}")

        t = threading.Thread(target=go)
        t.start()
        deadline = time.monotonic() + 60
        while nmoves(runs_target, live.run) < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        before = nmoves(runs_target, live.run)
        r = run_tiles("referee", "backup", "--runs", runs_target, "--out", backup)
        during, playing = nmoves(runs_target, live.run), t.is_alive()
        backed_up.set()
        t.join(timeout=300)
        assert r.returncode == 0, r.stderr
        assert not errors, errors
        assert playing and not finished and 5 <= before <= during < tiles  # the backup ran mid-play
        done = json.loads(r.stdout)
        assert done["out"] == str(backup) and done["bytes"] == backup.stat().st_size > 0
        if not is_url(runs_target):
            assert done["backend"] == "sqlite" and done["runs"] == 3 and before <= done["moves"] - 2 * tiles <= during
        else:
            assert done["backend"] == "postgresql"
        final = {row["run"]: row for row in read_scores(runs_target)}

        # a backup onto an existing file: one line, exit 2, the file left as it was
        for out in (backup, tmp_path / "precious"):
            if not out.exists():
                out.write_bytes(b"precious")
            was = out.read_bytes()
            r = run_tiles("referee", "backup", "--runs", runs_target, "--out", out)
            assert r.returncode == 2 and r.stdout == "", r
            assert r.stderr.strip().count("\n") == 0 and "exists; refusing to overwrite" in r.stderr
            assert out.read_bytes() == was
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temp left

    restored = restore(
        backup, runs_target, tmp_path, request.getfixturevalue("pg_cluster") if is_url(runs_target) else None
    )
    again = {row["run"]: row for row in read_scores(restored)}
    assert set(again) == set(final)
    cli = [json.loads(line) for line in run_tiles("referee", "score", "--runs", restored).stdout.splitlines()]
    assert {row["run"]: row for row in cli} == again
    for run, row in again.items():
        reward, moves, scored = replayed(truth, restored, run)  # a consistent snapshot of each run
        assert reward == row["reward"] and moves == row["moves"] and len(scored) == len(set(scored)), run
        if run != live.run:
            assert row == final[run] and row["reward"] == full  # finished before: the same score
        else:
            assert before <= row["moves"] <= during and row["moves"] <= final[run]["moves"]

    # the player of the interrupted run finishes it on a service over the restored database
    with service_process(lib, restored, [manifest], log=tmp_path / "restored.log") as (_proc, base):
        with Client(base) as c:
            c.use_run(live.run, player.tokens[live.run])
            agents.play("solver", HttpSession(c, DAY, run=live.run))
            assert c.score(live.run).reward == full
    player.close()
    reward, _moves, scored = replayed(truth, restored, live.run)
    assert reward == full and len(scored) == len(set(scored)) == tiles


def test_backup_refuses_what_is_not_a_runs_database(tmp_path):
    (tmp_path / "notes.txt").write_text("not a database")
    cases = [
        (tmp_path / "missing.sqlite", "no runs file there"),
        (tmp_path / "notes.txt", "not a runs file"),
    ]
    for runs, words in cases:
        out = tmp_path / "out.sqlite"
        r = run_tiles("referee", "backup", "--runs", runs, "--out", out)
        assert r.returncode == 2 and words in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert not out.exists()
    r = run_tiles("referee", "backup", "--runs", tmp_path / "missing.sqlite", "--out", tmp_path)
    assert r.returncode == 2 and "is a directory" in r.stderr
    if shutil.which("pg_dump"):  # a database that does not answer: pg_dump's line, exit 4
        out = tmp_path / "out.dump"
        r = run_tiles("referee", "backup", "--runs", f"postgresql://tiles@127.0.0.1:{free_port()}/runs", "--out", out)
        assert r.returncode == 4 and "pg_dump failed" in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
