"""The `islands` packing in the stitcher: islands go first and face no placed cell; its library
converges (the reason the packer exists, DECISIONS "A packing the library can converge on")."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from packers import make_packing
from packers.packing import adjacency
from stitcher.order import bfs_distance, placement_order


@settings(max_examples=25, deadline=None)
@given(st.integers(26, 200), st.binary(min_size=32, max_size=32))
def test_islands_are_placed_first_and_touch_no_placed_square(G, seed):
    """In the stitcher's order every island comes before every n = 6 tile, and no island touches
    another, so at its turn an island's border holds no known cell: any library tile fits it."""
    p = make_packing("islands", G, seed)
    adj = adjacency(p.squares)
    order = placement_order(p, bfs_distance(adj, p.seed_tile))
    sizes = [p.squares[i][2] for i in order]
    k = sizes.count(15)
    assert sizes[:k] == [15] * k and set(sizes[k:]) <= {5}
    placed = set()
    for i in order[:k]:
        assert not any(j in placed for j in adj[i])
        placed.add(i)


def test_the_second_night_needs_fewer_new_tiles(tmp_path):
    """Three nights of the daily build (human profile) on one library with the islands packer:
    every board verifies, and the new rows fall night after night."""
    from daily.build import BuildOptions, build

    lib = tmp_path / "lib.sqlite"
    new = []
    for day in ("2027-02-01", "2027-02-02", "2027-02-03"):
        before = 0
        if lib.exists():
            with sqlite3.connect(lib) as c:
                before = c.execute("SELECT count(*) FROM tiles").fetchone()[0]
        res = build(
            BuildOptions(
                day=day,
                library=lib,
                out_dir=tmp_path / "out",
                size=151,
                secret="islands",
                force=True,
                packer="islands",
                profile="human",
            ),
            log=lambda _l: None,
        )
        assert res.status == "frontier"
        with sqlite3.connect(lib) as c:
            new.append(c.execute("SELECT count(*) FROM tiles").fetchone()[0] - before)
    assert new[0] > new[1] > new[2], new
