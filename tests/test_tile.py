"""The Tile value: canonical orientation, content hash (goldens), and features carried by transforms."""

import hashlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import all_grids, random_givens, random_solution, tile_with_alts

from tilelib import bits
from tilelib.bits import Puzzle
from tilelib.symmetry import TRANSFORMS, apply_grid, compose, inverse
from tilelib.tile import Tile, content_hash, nibbles

ALL6 = all_grids(6)

# Three fixed tiles: solution string, givens mask ('1' = given), seam_mask,
# and the hash and canonical transform written down when the format was fixed.
GOLDEN = [
    (
        6,
        "001101010101101010010110101001110010",
        "......1.1.1111..1..........111.1....",
        0,
        "213baf4ceff40c12cfebec298c8c455251abdd660b0c4a6ecd3db321b4c42599",
        7,
    ),
    (
        10,
        "0100101011101011001000110011011100110100001001101111011001000101011010101010010101010101011011001010",
        "..1..1......1..1...1.1.1.1.....1.1.11....1.1...1.11.......1.1.1.1.1...1.1..1.....11111..1........1..",
        5,
        "eb71599d847fd04b6da979d90e34c39f0822dea66e70e05e3c09c8298997f6ab",
        12,
    ),
    (
        16,
        "1001001101010011110101011001010000101010011010110101010110101100101011011001001010101010011010010101"
        "0010110101010110110100101010101010010101001110010110101011000110101001101010011010010101010110010110"
        "10100101110010011001101000110110010011010101010010110110",
        ".1..1..1.1..1...1....11.....111...1.111.111.1.1..1..1.11.11.1.1...1.1...1......1.1......11..11....."
        "1..1.1....1.1..1....1...1.11....11......1.....11111..11...........1.1...111.1....11..11.1.1..11111.1"
        ".1.1..1..1.1.1......111.1.1.......1111.1..111.........1..",
        15,
        "d165a54a930d539b32cfafd2acc7793ebfedec3b4874d1ec5a6edb7afe423821",
        1,
    ),
]


def golden_tile(n, sol, giv, seam):
    s = Puzzle.parse(sol).values
    g = Puzzle.parse(giv.replace(".", "0")).values
    return Tile.from_grids(s, g, seam)


@pytest.mark.parametrize("n,sol,giv,seam,hash_,t", GOLDEN)
def test_golden_hash_and_canonical_transform(n, sol, giv, seam, hash_, t):
    tile = golden_tile(n, sol, giv, seam)
    assert tile.canonical_transform() == t
    assert tile.hash == hash_
    c = tile.transform(t)
    # the hash is sha256 over n | solution | givens | seam_mask of the canonical image
    raw = bytes([n]) + c.solution + c.givens + bytes([c.seam_mask])
    assert hashlib.sha256(raw).hexdigest() == hash_
    # every one of the 16 images has the same hash
    assert {tile.transform(u).hash for u in TRANSFORMS} == {hash_}


@given(st.sampled_from(bits.VALID_N[:3]), st.integers(0, 2**32 - 1), st.integers(0, 15))
def test_canonical_form_is_the_same_for_all_16_images(n, seed, seam):
    rng = np.random.default_rng(seed)
    tile = Tile.from_grids(random_solution(n, rng), random_givens(n, rng), seam)
    canon, t = tile.canonical()
    assert canon == tile.transform(t)
    for u in TRANSFORMS:
        img = tile.transform(u)
        c2, t2 = img.canonical()
        assert c2.solution == canon.solution and c2.givens == canon.givens
        assert c2.seam_mask == canon.seam_mask and img.hash == tile.hash
        # the canonical key is minimal over all images
        key = canon.solution + canon.givens + bytes([canon.seam_mask])
        assert all(
            key <= (img.transform(v).solution + img.transform(v).givens + bytes([img.transform(v).seam_mask]))
            for v in TRANSFORMS
        )


def test_canonical_ties_break_to_the_smallest_t():
    # a fully symmetric-under-complement-and-turn grid has ties; the chosen t must be the smallest
    sol = Puzzle.parse("0101101001011010").values  # 4×4 chessboard (not a tile; fine for ties)
    tile = Tile(4, bits.to_blob(sol), bits.to_blob(np.zeros((4, 4))), 0)
    key = lambda u: tile.transform(u).solution  # noqa: E731 + tile.transform(u).givens + bytes([tile.transform(u).seam_mask])
    best = min(key(u) for u in TRANSFORMS)
    assert tile.canonical_transform() == min(u for u in TRANSFORMS if key(u) == best)


def test_content_hash_depends_on_every_field():
    n, sol, giv, seam, h, _ = GOLDEN[0]
    tile = golden_tile(n, sol, giv, seam)
    c = tile.transform(tile.canonical_transform())
    base = content_hash(c.n, c.solution, c.givens, c.seam_mask)
    assert base == h
    assert content_hash(c.n, c.solution, c.givens, c.seam_mask ^ 1) != h
    flipped = bytes([c.givens[0] ^ 0x40]) + c.givens[1:]
    assert content_hash(c.n, c.solution, flipped, c.seam_mask) != h


@given(
    st.integers(0, len(ALL6) - 1), st.integers(0, 2**32 - 1), st.sampled_from(TRANSFORMS), st.sampled_from(TRANSFORMS)
)
def test_transform_carries_alts_and_side_nibbles(idx, seed, a, b):
    rng = np.random.default_rng(seed)
    sol = ALL6[idx]
    givens = random_givens(6, rng, density=0.4)
    tile = tile_with_alts(sol, givens, 15, ALL6)
    img = tile.transform(a)
    # the transformed features are exactly those computed from scratch on the transformed grids
    fresh = tile_with_alts(apply_grid(sol, a), img.givens_grid, img.seam_mask, [apply_grid(g, a) for g in ALL6])
    assert img.features == fresh.features
    # and transforms compose on whole tiles too
    assert tile.transform(a).transform(b) == tile.transform(compose(a, b))
    assert tile.transform(a).transform(inverse(a)) == tile
    assert len(nibbles(img.features.alt_sides, img.features.m - 1)) == img.features.m - 1


def test_tile_rejects_wrong_blob_lengths():
    with pytest.raises(ValueError):
        Tile(6, b"\x00" * 4, b"\x00" * 5, 0)


def test_transform_carries_every_feature_field():
    """Fields a transform does not move keep their values, whichever fields Features gains."""
    from dataclasses import fields

    from tilelib.tile import Features

    moved = {"pins", "alt_sides", "flip", "alts"}
    f = Features(
        version=3, m=2, blank=0.25, ladder=4, bifurcations=7, used_unique=1, needs_unique=1, needs_bifurcation=1,
        pins=0b0101, pin_depth=2, alt_sides=0b0011, alts=bits.to_blob(ALL6[6]),
    )  # fmt: skip
    assert {x.name for x in fields(Features)} - moved == {
        x.name for x in fields(Features) if getattr(f, x.name) != getattr(Features(), x.name)
    } - moved, "give every unmoved field a non-default value here"
    tile = Tile.from_grids(ALL6[5], np.ones((6, 6), dtype=np.uint8), 0b0011, f)
    for t in TRANSFORMS:
        g = tile.transform(t).features
        assert all(getattr(g, x.name) == getattr(f, x.name) for x in fields(Features) if x.name not in moved), t


def test_with_features_carries_the_canonical_transform():
    from tilelib.tile import Features

    rng = np.random.default_rng(5)
    for idx in rng.integers(0, len(ALL6), 40):
        bare = Tile.from_grids(ALL6[idx], random_givens(6, rng, density=0.4), int(rng.integers(0, 16)))
        t = bare.canonical_transform()
        rich = bare.with_features(Features(ladder=3))
        fresh = Tile(bare.n, bare.solution, bare.givens, bare.seam_mask, Features(ladder=3))
        assert rich == fresh and rich.canonical() == fresh.canonical() and rich.canonical_transform() == t
        unrated = Tile(bare.n, bare.solution, bare.givens, bare.seam_mask).with_features(Features(ladder=3))
        assert unrated.canonical() == fresh.canonical()


def test_canonical_rows_without_the_c_twin(monkeypatch):
    """The numpy path of tilelib.tile.canonical_rows gives what the C twin gives."""
    import tilelib.tile as tile_mod

    rng = np.random.default_rng(11)
    tiles = [
        Tile.from_grids(ALL6[i], random_givens(6, rng, density=0.4), int(rng.integers(0, 16)))
        for i in rng.integers(0, len(ALL6), 30)
    ]
    with_c = [tile_mod.canonical_rows(t.n, t.solution, t.givens, t.seam_mask) for t in tiles]
    monkeypatch.setattr(tile_mod, "_sym", None)
    assert [tile_mod.canonical_rows(t.n, t.solution, t.givens, t.seam_mask) for t in tiles] == with_c
