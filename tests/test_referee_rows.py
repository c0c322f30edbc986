"""Step 2's row inspection (``referee.verify.first_row_problem``): every distinct tile's features
screened at once (``tilelib.audit.bad_rows``, whose doubts the reference settles) and then recounted
by the engine on row ints. Against the plain definition — ``tile_row_problems`` tile by tile, in id
order — over one tampering of each feature column on each tile of a real board."""

from __future__ import annotations

import sqlite3

import pytest
from referee_support import board21, copy_fixture

from referee.verify import check_tiles_present, first_row_problem, tile_row_problems
from tilelib.store import Library

TAMPERINGS = [
    "blank = blank + 0.25",
    "pins = (pins + 1) % 16",
    "pin_depth = pin_depth + 1",
    "alt_sides = alt_sides + 1",
    "m = m + 1",
    "m = 1, alts = x'', alt_sides = 0, pins = 0, pin_depth = 0, flip = zeroblob(length(flip))",
    "flip = CAST(zeroblob(length(flip) - 1) || x'01' AS BLOB)",
    "alts = CAST(alts || solution AS BLOB)",
    "alts = CAST(x'ff' || ifnull(substr(alts, 2), x'') AS BLOB)",
    "ladder = 5, bifurcations = 99",
]


def reference(m, tiles):
    seen = set()
    for i, h in enumerate(m.hashes):
        if h not in seen:
            seen.add(h)
            probs = tile_row_problems(tiles[h])
            if probs:
                return i, h, probs[0]
    return None


@pytest.mark.parametrize("change", TAMPERINGS)
def test_the_rows_screened_at_once_answer_as_tile_by_tile(tmp_path_factory, tmp_path, change):
    fx = copy_fixture(board21(tmp_path_factory), tmp_path / "lib.sqlite")
    found = 0
    for h in dict.fromkeys(fx.manifest.hashes):
        lib_path = tmp_path / f"{h[:12]}.sqlite"
        lib_path.write_bytes(fx.lib_path.read_bytes())
        with sqlite3.connect(lib_path) as c:
            c.execute(f"UPDATE tiles SET {change} WHERE hash = ?", (h,))
        with Library.open(lib_path) as lib:
            tiles = check_tiles_present(fx.manifest, lib)
        want = reference(fx.manifest, tiles)
        assert first_row_problem(fx.manifest, tiles) == want
        found += want is not None
    assert found or change.startswith("ladder")  # the shallow inspection leaves the ladder to deep=True
