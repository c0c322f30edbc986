"""The leaderboard ranks what it promises (issue 54): ``GET /days/{day}/leaderboard?by=reward|batches|
requests|time`` over a real `tiles referee serve` (each backend), with three runs of the G=21 day
played to known costs — a slow one that clears the board in three batches reading as it goes, a
fast one that clears it in one batch and reads nothing, and one that stops half way — so each order
and each measure is known exactly; the requests a run makes after clearing do not count against it;
a run that only reads gets its count from the flusher; a wrong ``by`` is a 400 of one line."""

from __future__ import annotations

import time

import httpx
import pytest
from serve_support import board21_day, serving

from players.client import Client

DAY = "2026-11-29"


@pytest.fixture(scope="module")
def served(tmp_path_factory, module_runs_target):
    fx, d, manifest, truth = board21_day(tmp_path_factory, "leader")
    with serving(fx.lib_path, module_runs_target, [manifest], log=d / "serve.log") as base:
        yield base, truth


def order(truth) -> list[int]:
    """Every tile, each after a seam neighbour: an order the judge accepts in one batch."""
    seen, queue = [truth.board.seed_tile], [truth.board.seed_tile]
    while queue:
        for t in sorted(truth.nbrs[queue.pop(0)]):
            if t not in seen:
                seen.append(t)
                queue.append(t)
    return seen


def leaderboard(base: str, by: str) -> list[dict]:
    r = httpx.get(f"{base}/api/v1/days/{DAY}/leaderboard", params={"by": by})
    assert r.status_code == 200 and r.json()["by"] == by, r.text
    return r.json()["runs"]


def test_each_order_ranks_its_measure(served):
    base, truth = served
    tiles = order(truth)
    full = sum(len(truth.truth(t)) for t in tiles)
    thirds = [tiles[: len(tiles) // 3], tiles[len(tiles) // 3 : 2 * len(tiles) // 3], tiles[2 * len(tiles) // 3 :]]
    with Client(base) as c:
        slow = c.create_run(DAY, player="slow").run  # the oldest: it wins ties on reward
        for part in thirds:
            c.frontier(slow)
            c.run_tile(slow, part[0])
            c.moves(slow, [(t, truth.truth(t)) for t in part])
            time.sleep(0.6)
        fast = c.create_run(DAY, player="fast").run
        c.moves(fast, [(t, truth.truth(t)) for t in tiles])
        half = c.create_run(DAY, player="half").run
        c.moves(half, [(t, truth.truth(t)) for t in thirds[0]])
        for _ in range(5):  # after clearing: not counted against it
            c.score(fast)
            c.run_tile(fast, tiles[0])
        # the reads above wait in memory for the flusher; a marker run's reads, made after them, are
        # written no sooner than theirs (the flusher writes the counts that have waited STALE seconds),
        # so once the marker's show, the fast run's post-clear reads are stored and could be counted
        marker = c.create_run(DAY, player="marker").run
        c.frontier(marker)
    wait_flushed(base, marker, 1)

    rows = {by: leaderboard(base, by) for by in ("reward", "batches", "requests", "time")}
    mine = {by: [r for r in rs if r["run"] in (slow, fast, half)] for by, rs in rows.items()}
    names = {by: [r["player"] for r in rs] for by, rs in mine.items()}
    assert names == {
        "reward": ["slow", "fast", "half"],
        "batches": ["fast", "slow", "half"],
        "requests": ["fast", "slow", "half"],
        "time": ["fast", "slow", "half"],
    }
    got = {r["player"]: r for r in mine["reward"]}
    assert got["slow"]["cleared"] and got["fast"]["cleared"] and not got["half"]["cleared"]
    assert got["slow"]["reward"] == got["fast"]["reward"] == full
    assert (got["slow"]["batches"], got["fast"]["batches"], got["half"]["batches"]) == (3, 1, 1)
    assert (got["slow"]["requests"], got["fast"]["requests"], got["half"]["requests"]) == (9, 1, 1)
    assert got["slow"]["time"] >= 1.2 and 0 <= got["fast"]["time"] < got["slow"]["time"] and got["half"]["time"] is None
    for by, rs in rows.items():
        assert [r["rank"] for r in rs] == list(range(1, len(rs) + 1)), by


def test_time_is_exact_to_the_millisecond_for_runs_made_100_ms_apart(served):
    """Two runs made 100 ms apart late in one second: the second clears the board at once, the first
    about 0.45 s after it was made. Counted from whole seconds, the fast run's time would be 0.5 s or
    more and the order a matter of luck; counted from the instant (runs version 5) it is neither."""
    base, truth = served
    tiles = order(truth)
    while time.time() % 1 < 0.5:  # late in a second: a whole-second count would add at least 0.5 s
        time.sleep(0.01)
    with Client(base) as c:
        first = c.create_run(DAY, player="ms-first").run
        time.sleep(0.1)
        second = c.create_run(DAY, player="ms-second").run
        c.moves(second, [(t, truth.truth(t)) for t in tiles])
        time.sleep(0.3)
        c.moves(first, [(t, truth.truth(t)) for t in tiles])
    rows = [r for r in leaderboard(base, "time") if r["run"] in (first, second)]
    assert [r["player"] for r in rows] == ["ms-second", "ms-first"]
    took = {r["player"]: r["time"] for r in rows}
    assert 0 <= took["ms-second"] < 0.25 and 0.35 <= took["ms-first"] < 1.0, took
    assert isinstance(rows[0]["created"], int)  # the row still shows the whole second


def wait_flushed(base: str, run: str, requests: int, limit: float = 60) -> dict:
    """``run``'s leaderboard row once its ``requests`` reads are stored (the flusher's), a generous
    ``limit`` guarding against a hang."""
    deadline = time.monotonic() + limit
    while True:
        row = next(r for r in leaderboard(base, "reward") if r["run"] == run)
        if row["requests"] == requests:
            return row
        assert time.monotonic() < deadline, f"the flusher did not write {run}'s reads: {row}"
        time.sleep(0.5)


def test_a_wrong_order_is_a_400_of_one_line(served):
    base, _ = served
    r = httpx.get(f"{base}/api/v1/days/{DAY}/leaderboard", params={"by": "luck"})
    assert r.status_code == 400 and "by" in r.json()["error"] and "\n" not in r.json()["error"]


def test_reads_of_a_run_without_batches_are_written_by_the_flusher(served):
    """A run that only reads gets its requests written once they have waited ``asked.STALE`` seconds."""
    base, truth = served
    with Client(base) as c:
        reader = c.create_run(DAY, player="reader").run
        for _ in range(3):
            c.frontier(reader)
    row = wait_flushed(base, reader, 3)
    assert row["requests"] == 3 and not row["cleared"] and row["batches"] == 0
