"""`tiles referee analyze`: the analyzer of a day from a runs file — the JSON the API gives (leaderboard,
day analysis, one run's) and, with --png, the leaderboard and the two charts drawn (the test reads the
pixels back: both series' colours are on the image) — and its one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_support import run_tiles
from serve_support import board21_day

from players import agents
from players.sessions import LocalSession
from referee.service.boards import DayBoard, load_manifest
from referee.service.runs import RunStore
from tilelib.store import Library


@pytest.fixture(scope="module")
def played(tmp_path_factory, module_runs_target):
    """A G=21 day with three runs in a runs database (a file, then PostgreSQL): the solver (twice, 2
    moves a batch) and random."""
    fx, d, manifest, _truth = board21_day(tmp_path_factory, "analyze21")
    runs = module_runs_target
    m = load_manifest(manifest)
    with Library.open(fx.lib_path) as lib:
        store = RunStore(runs, {m.day: DayBoard.load(m, lib, runs)})
    try:
        solver = agents.play("solver", LocalSession(store, m.day, "solver-bot", 2), player="solver-bot")
        agents.play("solver", LocalSession(store, m.day, None, 3))
        agents.play("random", LocalSession(store, m.day, "rand", 4), seed=1)
        expect = {
            "leaderboard": store.leaderboard(m.day, 10),
            "analysis": store.day_analysis(m.day, 60.0),
            "run": store.run_analysis(solver.run),
        }
    finally:
        store.close()
    return fx.lib_path, manifest, runs, m.day, solver, expect


def colour_pixels(png, rgb) -> int:
    import matplotlib.image

    img = (matplotlib.image.imread(str(png))[:, :, :3] * 255).astype(int)
    return int((np.abs(img - np.array(rgb)).max(axis=2) < 30).sum())


def test_the_json_is_the_apis_and_the_png_draws_both_series(played, tmp_path):
    lib, manifest, runs, day, solver, expect = played
    png = tmp_path / "report.png"
    r = run_tiles(
        "referee",
        "analyze",
        "--day",
        day,
        "--runs",
        runs,
        "--manifest",
        manifest,
        "-L",
        lib,
        "--run",
        solver.run,
        "--png",
        png,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out == {"day": day, **expect}
    top = {row["player"]: row["reward"] for row in out["leaderboard"][:2]}
    assert top == {"solver-bot": solver.reward, None: solver.reward}  # the two solver runs tie
    assert out["leaderboard"][2]["player"] == "rand" and out["run"]["batches"][-1]["total_reward"] == solver.reward
    assert f"wrote {png}" in r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert colour_pixels(png, (0x3D, 0x7B, 0xE0)) > 300  # the run's line and its leaderboard row
    assert colour_pixels(png, (0xE0, 0xA8, 0x00)) > 300  # the day's lines
    again = tmp_path / "again.png"
    r = run_tiles(
        "referee",
        "analyze",
        "--day",
        day,
        "--runs",
        runs,
        "--manifest",
        manifest,
        "-L",
        lib,
        "--run",
        solver.run,
        "--png",
        again,
    )
    assert r.returncode == 0, r.stderr
    assert again.read_bytes() == png.read_bytes()  # same runs, same picture, byte for byte
    r = run_tiles(
        "referee",
        "analyze",
        "--day",
        day,
        "--runs",
        runs,
        "--manifest",
        manifest,
        "-L",
        lib,
        "--png",
        tmp_path / "day.png",
    )
    assert r.returncode == 0 and json.loads(r.stdout)["run"] is None
    assert colour_pixels(tmp_path / "day.png", (0x3D, 0x7B, 0xE0)) < colour_pixels(png, (0x3D, 0x7B, 0xE0))


@pytest.mark.parametrize(
    "args, says",
    [
        (["--day", "2026-02-30"], "--day"),
        (["--day", "2031-01-01"], "differs from the manifest's day"),
        (["--day", "2031-01-01", "--manifest", None], "no manifest for 2031-01-01 in the library"),
        (["--run", "r0000000000000000"], "no run"),
        (["--runs", "missing.sqlite"], "no runs file"),
        (["--png", "."], "is a directory"),
        (["--bucket", "0"], "--bucket"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(played, tmp_path, monkeypatch, args, says):
    lib, manifest, runs, day, _solver, _ = played
    monkeypatch.chdir(tmp_path)
    base = {"--day": day, "--runs": str(runs), "--manifest": str(manifest), "-L": str(lib), "--png": "out.png"}
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    r = run_tiles("referee", "analyze", *[x for k, v in base.items() if v is not None for x in (k, v)])
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and says in lines[0], r.stderr
    assert not (tmp_path / "out.png").exists() and r.stdout == ""
