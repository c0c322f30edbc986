"""Early repair: a square none of whose candidates passes the forward check, and for which no
window-aware tile exists, is repaired at its own turn instead of being placed unchecked.

Placed unchecked, such a tile leaves an open neighbour that no tile can complete; that neighbour
then needs a repair of its own, which remakes the large tiles around it (measured on a G = 1000
night: half of the new rows came from repairs of n = 6 squares doomed that way). Checked on real
stitches of small boards against the same stitch with the option off.
"""

from __future__ import annotations

import importlib

from packers import make_packing
from packers.packing import validate_packing
from stitcher.stitch import StitchOptions, stitch
from tests.test_stitch_seams import rebuild
from tilelib.rng import Stream
from tilelib.store import Library

stitch_mod = importlib.import_module("stitcher.stitch")  # the package re-exports the function

G = 61
SEEDS = (2, 4)  # packings on which, from an empty library, some square meets this case (generator 5)


def _run(tmp_path, seed: int, early: bool):
    with Library.create(tmp_path / f"lib-{seed}-{early}.sqlite") as lib:
        s = bytes([seed]) * 32
        res = stitch(make_packing("big-first", G, s), lib, Stream(s, "stitch"), StitchOptions(early_repair=early))
        validate_packing(res.packing, res.packing.P)
        assert all(lib.has(h) for h, _t in res.placements)
        rebuild(res, lib)  # every placed tile agrees with every neighbour on shared cells
        return res


def test_a_doomed_square_is_repaired_at_its_turn_not_placed_unchecked(tmp_path):
    """With the option off these boards place tiles unchecked; with it on those squares are
    repaired at their turn (counted in ``repaired`` too) and fewer or no tiles go unchecked."""
    for seed in SEEDS:
        off = _run(tmp_path, seed, False)
        on = _run(tmp_path, seed, True)
        assert off.stats.total("repaired_early") == 0
        assert off.stats.total("unchecked") >= 1
        assert on.stats.total("repaired_early") >= 1
        assert on.stats.total("repaired_early") <= on.stats.total("repaired")
        assert on.stats.total("unchecked") < off.stats.total("unchecked")
        assert on.stats.final_fill >= off.stats.final_fill


def test_early_repair_runs_only_at_the_top_level(tmp_path, monkeypatch):
    """A repair never starts another from inside itself: every repair call that comes from a
    square's own turn finds the stitch outside any drain section, and the square still open."""
    seen = []
    real = stitch_mod.repair

    def spy(run, i):
        seen.append((run._depth, not run.at.placed(i)))
        return real(run, i)

    monkeypatch.setattr(stitch_mod, "repair", spy)
    res = _run(tmp_path, SEEDS[0], True)
    assert res.stats.total("repaired_early") >= 1
    assert all(open_ for _d, open_ in seen)
    assert all(d == 0 for d, _o in seen)  # resolve's repairs and early ones: never nested


def test_early_repair_is_deterministic(tmp_path):
    """The same packing, seed and (empty) library give the same placements and packing twice."""
    got = []
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        got.append(_run(tmp_path / sub, SEEDS[1], True))
    a, b = got
    assert a.placements == b.placements
    assert a.packing == b.packing
