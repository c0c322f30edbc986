"""Runs as a dataset (``tiles referee export``, ``referee.trajectories``; issue 73): runs of a finished
day, played through the store (right, wrong and malformed moves, several batches), come back from
``trajectories.parquet`` read by pandas exactly as the runs database holds them, on each backend; a
day not over is refused with nothing written."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from cli_support import run_tiles
from serve_support import board21_day

from referee.runsdb import opened
from referee.service.boards import DayBoard, load_manifest
from referee.service.runs import RunStore
from referee.trajectories import TRAJECTORIES_FILE, export_runs
from tilelib.errors import BadInput
from tilelib.store import Library


@pytest.fixture(scope="module")
def day21(tmp_path_factory):
    fx, _d, manifest, truth = board21_day(tmp_path_factory, "traj21")
    return fx.lib_path, load_manifest(manifest), truth


def play(store: RunStore, day: str, truth) -> list[str]:
    """Two runs: one in three batches (a right move, a wrong one and a malformed one, then more right
    moves), one that only errs. Their ids, oldest first."""
    a, token_a = store.create(day, "ann")
    seed = min(a.frontier)
    store.submit(a.run, token_a, [{"tile": seed, "cells": truth.truth(seed)}])
    nxt = sorted(truth.nbrs[seed])
    wrong = "".join("1" if c == "0" else "0" for c in truth.truth(nxt[0]))
    store.submit(a.run, token_a, [{"tile": nxt[0], "cells": wrong}, {"tile": nxt[1], "cells": "01"}])
    time.sleep(0.05)
    store.submit(a.run, token_a, [{"tile": t, "cells": truth.truth(t)} for t in nxt[:2]])
    b, token_b = store.create(day, None)
    store.submit(b.run, token_b, [{"tile": seed, "cells": "0" * len(truth.truth(seed))}])
    return [a.run, b.run]


def test_the_trajectories_round_trip_against_the_runs_database(day21, runs_target, tmp_path):
    import pandas as pd

    lib_path, m, truth = day21
    with Library.open(lib_path) as lib:
        store = RunStore(runs_target, {m.day: DayBoard.load(m, lib, runs_target)})
    try:
        runs = play(store, m.day, truth)
    finally:
        store.close()
    after = dt.date.fromisoformat(m.day) + dt.timedelta(days=1)
    rep = export_runs(runs_target, m.day, m.day, tmp_path / "out", today=after)
    assert (rep.days, rep.runs, rep.batches) == ((m.day,), 2, 4) and "4 batch(es) of 2 run(s)" in rep.line()
    frame = pd.read_parquet(tmp_path / "out" / TRAJECTORIES_FILE)
    assert list(frame.columns) == ["day", "run", "player", "batch", "t", "moves", "verdicts", "reward", "solved"]
    assert list(frame["run"]) == [runs[0]] * 3 + [runs[1]] and list(frame["batch"]) == [1, 2, 3, 1]
    assert list(frame["player"].fillna("-")) == ["ann", "ann", "ann", "-"]
    with opened(runs_target) as db:
        for run in runs:
            stored = db.read(
                "SELECT tile, cells, accepted, correct, reward, reason FROM moves WHERE run = ? ORDER BY id", (run,)
            )
            mine = frame[frame["run"] == run]
            moves = [mv for batch in mine["moves"] for mv in batch]
            verdicts = [v for batch in mine["verdicts"] for v in batch]
            assert [(mv["tile"], mv["cells"]) for mv in moves] == [(r[0], r[1]) for r in stored]
            assert [(v["accepted"], v["correct"], v["reward"], v["reason"]) for v in verdicts] == [
                (bool(r[2]), bool(r[3]), r[4], r[5]) for r in stored
            ]
            assert list(mine["reward"]) == [sum(v["reward"] for v in b) for b in mine["verdicts"]]
            assert list(mine["solved"]) == [sum(v["correct"] for v in b) for b in mine["verdicts"]]
            (created,) = db.read("SELECT coalesce(created_at, created) FROM runs WHERE run = ?", (run,))[0]
            ats = [r[0] for r in db.read("SELECT at FROM batches WHERE run = ? ORDER BY id", (run,))]
            assert list(mine["t"]) == [round(at - created, 3) for at in ats] and list(mine["t"]) == sorted(mine["t"])
    first = frame.iloc[0]
    assert first["verdicts"][0]["correct"] and first["reward"] == len(truth.truth(int(first["moves"][0]["tile"])))


def test_a_day_not_over_is_refused_and_nothing_is_written(day21, tmp_path):
    _lib, m, _truth = day21
    runs = tmp_path / "runs.sqlite"
    with opened(runs):
        pass
    with pytest.raises(BadInput, match="is not over"):
        export_runs(runs, m.day, m.day, tmp_path / "out", today=dt.date.fromisoformat(m.day))
    assert not (tmp_path / "out").exists()


def test_the_command(day21, tmp_path):
    lib_path, m, truth = day21
    runs = tmp_path / "runs.sqlite"
    with Library.open(lib_path) as lib:
        store = RunStore(runs, {m.day: DayBoard.load(m, lib, runs)})
    try:
        play(store, m.day, truth)
    finally:
        store.close()
    args = ["referee", "export", "--runs", str(runs), "--from", m.day]
    r = run_tiles(*args, "--to", m.day, "--out", str(tmp_path / "o"))
    assert r.returncode == 0 and "exported 4 batch(es) of 2 run(s) over 1 day(s)" in r.stdout, r.stderr
    bad = run_tiles(*args, "--to", "2999-01-01", "--out", str(tmp_path / "p"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "is not over" in bad.stderr
