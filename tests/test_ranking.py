"""The leaderboard's order (``referee.service.ranking``) in process, from its definition: a row from a run's
aggregates, and each order checked against a sort written here from the module's docstring (the service's
own tests, test_serve_leaderboard.py, play it over HTTP). Quick enough for mutation testing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.service.ranking import MEASURES, Row, key, rank, row

TILES = 10


def a_row(**kw):
    base = dict(
        run="r1",
        player="ann",
        created=1000,
        reward=50,
        solved=4,
        moves=30,
        requests=12,
        cleared_requests=None,
        batches_to_last=3,
        last_at=None,
        batches=5,
    )
    base.update(kw)
    return row(*base.values(), tiles=TILES)


def test_a_run_that_has_not_cleared_shows_what_it_spent_so_far_and_no_time():
    r = a_row(cleared_requests=7, last_at=1010.5, created=1000.25)
    assert r.at == 1000.25 and r.shown == {
        "run": "r1",
        "player": "ann",
        "created": 1000,
        "reward": 50,
        "solved": 4,
        "moves": 30,
        "cleared": False,
        "batches": 5,
        "requests": 12,
        "time": None,
    }


def test_a_cleared_run_shows_what_it_spent_to_clear_and_its_time_to_the_millisecond():
    r = a_row(solved=TILES, cleared_requests=7, batches_to_last=3, batches=9, requests=40, last_at=1012.34567).shown
    assert (r["cleared"], r["batches"], r["requests"], r["time"]) == (True, 3, 7, 12.346)
    late = a_row(solved=TILES, created=1000.9, last_at=1001.078).shown  # made late in its second
    assert (late["created"], late["time"]) == (1000, 0.178)  # the whole second shown, the time exact


def test_a_cleared_run_without_a_stored_count_at_clearing_shows_its_requests():
    r = a_row(solved=TILES, cleared_requests=None, requests=40, last_at=1001.0).shown
    assert (r["requests"], r["time"]) == (40, 1.0)
    assert a_row(solved=TILES, last_at=None).shown["time"] is None  # no last batch recorded: no time


def test_the_measures_are_the_four_the_api_declares():
    assert MEASURES == ("reward", "batches", "requests", "time")


def expected_order(rows: list[Row], by: str) -> list[str]:
    """The docstring's order, written out: reward, solved (more first), age (to the microsecond), run
    id; for a cost, the cleared runs first by that cost (fewer first) then age, then the rest by
    reward as above."""

    def by_reward(r):
        return (-r.shown["reward"], -r.shown["solved"], r.at, r.shown["run"])

    if by == "reward":
        return [r.shown["run"] for r in sorted(rows, key=by_reward)]
    cleared = sorted((r for r in rows if r.shown["cleared"]), key=lambda r: (r.shown[by], r.at, r.shown["run"]))
    rest = sorted((r for r in rows if not r.shown["cleared"]), key=by_reward)
    return [r.shown["run"] for r in cleared + rest]


runs = st.lists(
    st.builds(
        lambda k, created, reward, solved, batches, reqs, last, cleared: a_row(
            run=f"r{k:03d}",
            created=created,
            reward=reward,
            solved=TILES if cleared else solved,
            batches=batches,
            batches_to_last=batches,
            requests=reqs,
            cleared_requests=reqs if cleared else None,
            last_at=created + last,
        ),
        st.integers(0, 999),
        st.integers(1_000_000, 1_010_000).map(lambda ms: ms / 1000),  # created, to the millisecond
        st.integers(0, 100),
        st.integers(0, TILES - 1),
        st.integers(0, 9),
        st.integers(0, 30),
        st.floats(0, 50, allow_nan=False),
        st.booleans(),
    ),
    max_size=12,
    unique_by=lambda r: r.shown["run"],
)


@given(runs, st.sampled_from(["reward", "batches", "requests", "time"]), st.integers(1, 15))
def test_each_order_is_its_definition_numbered_from_one(rows, by, limit):
    got = rank(rows, by, limit)
    assert [r["run"] for r in got] == expected_order(rows, by)[:limit]
    assert [r["rank"] for r in got] == list(range(1, len(got) + 1))
    assert all({k: v for k, v in r.items() if k != "rank"} in [x.shown for x in rows] for r in got)


def test_efficiency_ranks_only_what_reached_the_full_reward():
    """A run that spent little and solved little never passes one that cleared the board."""
    lazy = a_row(run="lazy", reward=1, solved=1, batches=1, requests=1, created=900)
    done = a_row(run="done", reward=100, solved=TILES, batches_to_last=30, cleared_requests=90, last_at=1500.0)
    for by in ("batches", "requests", "time"):
        assert [r["run"] for r in rank([lazy, done], by, 10)] == ["done", "lazy"], by
    more = a_row(run="more", reward=50, solved=5)
    fewer = a_row(run="fewer", reward=50, solved=4, created=1)  # same reward, fewer tiles: after, though older
    assert [r["run"] for r in rank([fewer, more], "reward", 10)] == ["more", "fewer"]


@pytest.mark.parametrize("by", ["reward", "batches", "requests", "time"])
def test_ties_go_to_the_older_run_then_the_run_id(by):
    same = dict(reward=100, solved=TILES, batches_to_last=3, cleared_requests=5, last_at=1010.0)
    rows = [a_row(run="b", created=1000, **same), a_row(run="a", created=1000, **same)]
    rows.append(a_row(run="z", created=999, **{**same, "last_at": 1009.0}))
    assert [r["run"] for r in rank(rows, by, 10)] == ["z", "a", "b"]
    assert [r.shown["run"] for r in sorted(rows, key=key(by))] == ["z", "a", "b"]


@pytest.mark.parametrize("by", ["reward", "batches", "requests", "time"])
def test_runs_made_in_one_second_rank_by_the_instant_they_were_made(by):
    """Two runs made 100 ms apart in the same whole second, alike in all else: the older first, in
    every order, whatever their ids (the shown ``created`` is the same second for both)."""
    same = dict(reward=100, solved=TILES, batches_to_last=3, cleared_requests=5)
    first = a_row(run="r9", created=1000.2, last_at=1010.2, **same)
    second = a_row(run="r1", created=1000.3, last_at=1010.3, **same)
    assert first.shown["created"] == second.shown["created"] == 1000
    assert [r["run"] for r in rank([second, first], by, 10)] == ["r9", "r1"]


def test_time_orders_a_fast_run_before_a_slow_one_made_earlier_in_the_same_second():
    """The case that ranked wrongly with whole seconds: 0.711 s against 0.178 s."""
    same = dict(reward=100, solved=TILES, batches_to_last=3, cleared_requests=5)
    slow = a_row(run="slow", created=1000.1, last_at=1000.811, **same)
    fast = a_row(run="fast", created=1000.9, last_at=1001.078, **same)
    assert [(r["run"], r["time"]) for r in rank([slow, fast], "time", 10)] == [("fast", 0.178), ("slow", 0.711)]
