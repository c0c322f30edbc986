"""``referee.board.assemble``'s two ways to one board: every tile placed at once with array operations,
and, when the tiles disagree, tile by tile (the definition, which names the first offence)."""

from __future__ import annotations

import json

import numpy as np
from referee_support import board21, copy_fixture

from referee.board import CheckFailed, _assemble_at_once, _assemble_in_order, fetch_tiles
from referee.manifest import from_json
from tilelib.store import Library


def mutate(m, f):
    d = json.loads(m.to_json())
    f(d)
    return from_json(d)


def test_the_board_placed_at_once_is_the_board_placed_tile_by_tile(tmp_path_factory, tmp_path):
    """``assemble`` places every tile with a few array operations and falls back to placing them one by
    one (the definition, which names the first offence) when they disagree. Over every tile under
    every transform, and every tile given another's row: the at-once placement answers None exactly
    when the one-by-one placement raises, and the same board otherwise."""
    fx = copy_fixture(board21(tmp_path_factory), tmp_path / "lib.sqlite")
    with Library.open(fx.lib_path) as lib:
        tiles = fetch_tiles(fx.manifest, lib)
    cases = [fx.manifest]
    count = len(fx.manifest.hashes)
    for i in range(count):
        for t in range(16):
            cases.append(mutate(fx.manifest, lambda d, i=i, t=t: d["tiles"][i].update(t=t)))
        j = (i + 1) % count
        cases.append(mutate(fx.manifest, lambda d, i=i, j=j: d["tiles"][i].update(hash=d["tiles"][j]["hash"])))
    fell_back = 0
    for m in cases:
        fast = _assemble_at_once(m, tiles)
        try:
            slow = _assemble_in_order(m, tiles)
        except CheckFailed:
            assert fast is None
            fell_back += 1
            continue
        assert fast is not None
        for f in ("solution", "owners", "givens", "tile_givens", "zone_givens"):
            a, b = getattr(fast, f), getattr(slow, f)
            assert a.dtype == b.dtype and np.array_equal(a, b), f
    assert 0 < fell_back < len(cases)
