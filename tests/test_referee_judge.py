"""The judge (FORMAT §10, §12): legal, illegal (off-frontier), wrong, malformed and replayed moves; runs
persist across calls; bad submissions write nothing.

Board: the shared G=21 fixture. Tile 0 (n=16 at the origin) is the seed tile; tiles 1-3 (n=6) run down
its right side, tiles 4-6 along its bottom, and tile 7 sits at (15, 15), touching tile 0 at ONE corner
cell only — so it is not reachable from tile 0 but from tiles 3 and 6.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_support import query_runs
from referee_support import board21 as shared_board21

from packers.packing import seam_neighbours
from referee.board import build_board
from referee.judge import Judge
from referee.runsdb import open_runsdb
from tilelib.errors import BadInput
from tilelib.store import Library


@pytest.fixture(scope="session")
def board21(tmp_path_factory):
    return shared_board21(tmp_path_factory)


@pytest.fixture
def judge(board21, runs_target):
    """A judge over a fresh runs database, a SQLite file and a PostgreSQL database in turn."""
    with Library.open(board21.lib_path) as lib:
        board = build_board(board21.manifest, lib)
    return Judge(board21.manifest, board, runs_target)


def cells(judge, i, flip=None):
    s = judge.truth(i)
    if flip is not None:
        s = s[:flip] + ("1" if s[flip] == "0" else "0") + s[flip + 1 :]
    return s


def sub(run, *moves):
    return json.dumps({"run": run, "moves": [{"tile": t, "cells": c} for t, c in moves]})


def stored_moves(judge) -> int:
    """Moves stored in the judge's runs database (0 while a runs file is not yet made)."""
    if isinstance(judge.runs, Path) and not judge.runs.exists():
        return 0
    return query_runs(judge.runs, "SELECT count(*) FROM moves")[0][0]


def test_layout_and_seam_rule(judge):
    sq = judge.board.squares
    assert sq[0] == (0, 0, 15) and sq[7] == (15, 15, 5) and judge.board.seed_tile == 0
    nb = seam_neighbours(sq)
    assert nb[0] == {1, 2, 3, 4, 5, 6}  # not 7: one shared corner cell is no seam
    assert nb[7] == {3, 6}
    assert all(i in nb[j] for i in range(8) for j in nb[i])  # symmetric


def test_truth_is_the_window_as_it_lies_on_the_board(judge, board21):
    x0, y0, s = judge.board.squares[2]
    want = "".join(str(int(v)) for v in board21.solution[y0 : y0 + s + 1, x0 : x0 + s + 1].ravel())
    assert judge.truth(2) == want and len(want) == 36


def test_a_run_legal_illegal_wrong_and_replayed(judge):
    v = judge.judge(
        sub(
            "alice",
            (7, cells(judge, 7)),  # off-frontier: nothing solved yet, not the seed
            (0, cells(judge, 0)),  # the seed tile, correct
            (7, cells(judge, 7)),  # still off-frontier: corner contact only
            (3, cells(judge, 3, flip=8)),  # reachable, wrong
            (3, cells(judge, 3)),  # retried, correct
            (7, cells(judge, 7)),  # now reachable through tile 3
            (0, cells(judge, 0)),
        )
    )  # replay
    assert [(x["tile"], x["accepted"], x["correct"], x["reward"]) for x in v] == [
        (7, False, False, 0),
        (0, True, True, 256),
        (7, False, False, 0),
        (3, True, False, 0),
        (3, True, True, 36),
        (7, True, True, 36),
        (0, False, False, 0),
    ]
    assert "shares no seam" in v[0]["reason"] and "shares no seam" in v[2]["reason"]
    assert "incorrect" in v[3]["reason"] and v[1]["reason"] is None and v[4]["reason"] is None
    assert "replay" in v[6]["reason"]
    assert set(v[0]) == {"tile", "accepted", "correct", "reward", "reason"}
    assert stored_moves(judge) == 7
    assert judge.score("alice") == {"run": "alice", "solved": 3, "reward": 328}


def test_runs_persist_across_calls_and_are_separate(judge, board21):
    judge.judge(sub("bob", (0, cells(judge, 0))))
    # a new Judge on the same file (a new CLI call) continues the run
    again = Judge(judge.manifest, judge.board, judge.runs)
    v = again.judge(sub("bob", (0, cells(judge, 0)), (4, cells(judge, 4))))
    assert [(x["accepted"], x["correct"]) for x in v] == [(False, False), (True, True)]
    assert "replay" in v[0]["reason"]
    # another run starts from scratch
    v = again.judge(sub("carol", (4, cells(judge, 4))))
    assert v[0]["accepted"] is False
    assert again.score("bob")["solved"] == 2 and again.score("carol")["solved"] == 0


MALFORMED = [
    ("not an object", [1, 2], None, "must be an object"),
    ("tile missing", {"cells": "01"}, None, "'tile' must be an integer"),
    ("tile as string", {"tile": "0", "cells": "0"}, "0", "'tile' must be an integer"),
    ("tile as float", {"tile": 0.0, "cells": "0"}, None, "'tile' must be an integer"),
    ("tile as bool", {"tile": True, "cells": "0"}, None, "'tile' must be an integer"),
    ("unknown id", {"tile": 8, "cells": "0"}, 8, "unknown tile id 8"),
    ("negative id", {"tile": -1, "cells": "0"}, -1, "unknown tile id -1"),
    ("huge id", {"tile": 10**30, "cells": "0"}, 10**30, "unknown tile id"),
    ("cells missing", {"tile": 0}, 0, "'cells' must be a string"),
    ("cells as list", {"tile": 0, "cells": [0, 1]}, 0, "'cells' must be a string"),
    ("cells too short", {"tile": 0, "cells": "01" * 127}, 0, "holds 254 characters"),
    ("cells too long", {"tile": 1, "cells": "0" * 37}, 1, "needs 36"),
    ("cells bad char", {"tile": 1, "cells": "0" * 35 + "2"}, 1, "'2' at position 35"),
    ("cells unicode", {"tile": 1, "cells": "０" * 36}, 1, "only '0' and '1'"),
    ("cells lone surrogate", {"tile": 1, "cells": "\ud800" * 36}, 1, "only '0' and '1'"),
    ("tile lone surrogate", {"tile": "\udfff", "cells": "0"}, "\udfff", "'tile' must be an integer"),
]


def test_malformed_moves_are_rejected_one_by_one(judge):
    # the seed tile first, so tile 1 (its neighbour) is on the frontier and its grids are judged for form
    first = [{"tile": 0, "cells": cells(judge, 0)}]
    moves = first + [m for _, m, _, _ in MALFORMED] + [{"tile": 1, "cells": cells(judge, 1)}]
    v = judge.judge(json.dumps({"run": "mallory", "moves": moves}))
    assert len(v) == len(moves) and v[0]["correct"] is True
    for (name, _, tile, words), got in zip(MALFORMED, v[1:], strict=False):  # v has one move more
        assert got["tile"] == tile, name
        assert (got["accepted"], got["correct"], got["reward"]) == (False, False, 0), name
        assert words in got["reason"], (name, got["reason"])
    assert v[-1]["correct"] is True  # a good move after bad ones still counts
    assert stored_moves(judge) == len(moves)
    json.dumps(v)  # every verdict is plain JSON


def test_a_move_off_the_frontier_is_off_it_whatever_its_cells_hold(judge):
    """FORMAT §14: the off-frontier reason comes before the cells' form (the service refuses a batch
    on it, and a malformed grid must not hide it)."""
    off = next(
        t
        for t in range(len(judge.board.squares))
        if t != judge.board.seed_tile and not judge.nbrs[t] & {judge.board.seed_tile}
    )
    for bad in ("0", "01x", None, "0" * 36):
        v = judge.judge(json.dumps({"run": "oscar", "moves": [{"tile": off, "cells": bad}]}))
        assert v[0]["accepted"] is False and "shares no seam with a solved tile" in v[0]["reason"], (bad, v)


@pytest.mark.parametrize(
    "text,words",
    [
        ("{not json", "not valid JSON"),
        (b"\xff\xfe", "UTF-8"),
        ("[]", "JSON object"),
        ('{"moves": []}', "'run'"),
        ('{"run": "", "moves": []}', "'run'"),
        ('{"run": 3, "moves": []}', "'run'"),
        ('{"run": "x", "moves": {}}', "'moves'"),
        ('{"run": "x"}', "'moves'"),
        ('{"run": "\\ud800", "moves": []}', "valid Unicode"),
    ],
)
def test_malformed_submissions_write_nothing(judge, text, words):
    judge.judge(sub("first", (0, cells(judge, 0))))
    with pytest.raises(BadInput, match=words):
        judge.judge(text)
    assert stored_moves(judge) == 1


def test_a_run_belongs_to_one_board(judge):
    judge.judge(sub("dave", (0, cells(judge, 0))))
    other = Judge(judge.manifest.with_clues([]), judge.board, judge.runs)  # another manifest digest
    with pytest.raises(BadInput, match="another board"):
        other.judge(sub("dave", (1, cells(judge, 1))))
    assert stored_moves(judge) == 1


def test_a_file_that_is_not_a_runs_file_is_refused_untouched(judge, board21, tmp_path):
    before = board21.lib_path.read_bytes()
    with pytest.raises(BadInput, match="not a runs file"):
        open_runsdb(board21.lib_path)
    assert board21.lib_path.read_bytes() == before
    junk = tmp_path / "junk.txt"
    junk.write_text("hello")
    with pytest.raises(BadInput, match="not a runs file"):
        Judge(judge.manifest, judge.board, junk).judge(sub("x"))
    assert junk.read_text() == "hello"


def test_concurrent_judges_on_one_runs_file_serialise(judge):
    """Eight judges race to solve the seed tile in one run: exactly one wins, the rest are replays."""
    import threading

    results, errors = [], []

    def go():
        try:
            j = Judge(judge.manifest, judge.board, judge.runs)
            results.extend(j.judge(sub("race", (0, cells(judge, 0)))))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    judge.judge(sub("warmup"))  # create the file first
    threads = [threading.Thread(target=go) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(v["correct"] for v in results) == [False] * 7 + [True]
    assert judge.score("race") == {"run": "race", "solved": 1, "reward": 256}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
MOVE = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"tile": st.one_of(st.integers(-2, 9), JSON), "cells": st.one_of(st.text(alphabet="01x", max_size=40), JSON)}
    ),
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moves=st.lists(MOVE, max_size=6))
def test_any_json_moves_get_a_verdict_each_and_never_crash(judge, moves):
    before = stored_moves(judge)
    v = judge.judge({"run": "fuzz", "moves": moves})
    assert len(v) == len(moves)
    for x in v:
        assert set(x) == {"tile", "accepted", "correct", "reward", "reason"}
        assert x["correct"] is False or (x["accepted"] is True and x["reason"] is None)
        assert x["reward"] == 0 or x["correct"] is True
        json.dumps(x)
    assert stored_moves(judge) == before + len(moves)
