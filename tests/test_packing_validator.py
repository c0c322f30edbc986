"""The one packing validator (FORMAT §6, §10 step 1) and the Packing JSON shape.

Every rejection test names the offence the validator must report first.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packers import make_packing
from packers.packing import Packing, from_json, group_zones, validate_packing
from tilelib.errors import BadInput, VerificationFailed

# A hand-made 12×12 pitch board: a 7-square, three 5-squares, and an L-shaped zone.
#   squares: (0,0,7) (7,0,5) (0,7,5) (5,7,5)  -> zone: (7,5,5,2) + (10,7,2,5)
HAND = Packing(
    P=12,
    squares=((0, 0, 7), (7, 0, 5), (0, 7, 5), (5, 7, 5)),
    zones=(((7, 5, 5, 2), (10, 7, 2, 5)),),
    seed_tile=0,
    name="hand",
    version=1,
)


def reject(packing: Packing, P: int, *words: str) -> str:
    with pytest.raises(VerificationFailed) as ei:
        validate_packing(packing, P)
    msg = str(ei.value)
    for w in words:
        assert w in msg, (w, msg)
    return msg


def test_hand_packing_is_sound():
    validate_packing(HAND, 12)
    assert HAND.zone_area() == 20
    assert HAND.zone_fraction() == 20 / 144


@pytest.fixture(scope="module")
def real() -> Packing:
    return make_packing("big-first", 61, bytes(range(32)))


def test_real_packing_is_sound(real):
    validate_packing(real, 60)


def test_overlap_in_last_square(real):
    x, y, s = real.squares[3]
    bad = replace(real, squares=real.squares + ((x + 1, y + 1, 5),))
    k = len(real.squares)
    reject(bad, 60, f"tile {k} ", "overlaps tile 3")


def test_gap_is_named(real):
    x, y, s = real.squares[-1]
    bad = replace(real, squares=real.squares[:-1])
    msg = reject(bad, 60, "gap", f"({x},{y})", f"{s * s} uncovered")
    assert "overlap" not in msg


def test_zone_over_a_square():
    bad = replace(HAND, zones=HAND.zones + (((1, 1, 2, 2),),))
    reject(bad, 12, "zone 1 rect 0", "overlaps tile 0")


def test_zone_over_a_zone():
    bad = replace(HAND, zones=HAND.zones + (((10, 8, 1, 1),),))
    reject(bad, 12, "zone 1 rect 0", "overlaps an earlier zone rectangle")


@pytest.mark.parametrize(
    "s,why",
    [
        (6, "even"),
        (8, "even"),
        (16, "even"),
        (3, "below 5"),
        (1, "below 5"),
        (17, "above 15"),
        (0, "even"),
        (-5, "below 5"),
    ],
)
def test_illegal_sides(s, why):
    bad = replace(HAND, squares=HAND.squares[:2] + ((0, 7, s),) + HAND.squares[3:])
    reject(bad, 12, "tile 2", why)


def test_out_of_bounds():
    bad = replace(HAND, squares=HAND.squares[:3] + ((8, 7, 5),))
    reject(bad, 12, "tile 3", "runs out of the board")
    bad = replace(HAND, zones=(((7, 5, 5, 2), (10, 7, 3, 5)),))
    reject(bad, 12, "zone 0 rect 1", "runs out")


def test_negative_coordinates():
    bad = replace(HAND, squares=((-1, 0, 7),) + HAND.squares[1:])
    reject(bad, 12, "tile 0", "negative")
    bad = replace(HAND, zones=(((7, -1, 5, 2),),))
    reject(bad, 12, "zone 0 rect 0", "negative")


@pytest.mark.parametrize("w,h", [(0, 2), (5, 0), (-1, 2), (5, -2)])
def test_zone_rect_non_positive(w, h):
    bad = replace(HAND, zones=(((7, 5, w, h), (10, 7, 2, 5)),))
    reject(bad, 12, "zone 0 rect 0", "non-positive")


def test_empty_zone():
    reject(replace(HAND, zones=HAND.zones + ((),)), 12, "zone 1 has no rectangles")


@pytest.mark.parametrize("seed", [-1, 4, 100])
def test_seed_tile_out_of_range(seed):
    reject(replace(HAND, seed_tile=seed), 12, f"seed_tile {seed}")


def test_wrong_board_size():
    reject(HAND, 13, "pitch is 12, expected 13")
    reject(HAND, 0, "positive")


def test_huge_board_is_refused_before_allocating():
    huge = from_json(
        {
            "board": {"cells": 10**6, "pitch": 10**6 - 1},
            "packer": {"name": "x", "version": 1},
            "seed_tile": 0,
            "tiles": [{"id": 0, "x0": 0, "y0": 0, "n": 6}],
            "zones": [],
        }
    )
    reject(huge, 10**6 - 1, "exceeds the supported maximum")


def test_first_offence_wins():
    # An even side on tile 1 and an overlap on tile 3: tile 1 is reported.
    bad = replace(HAND, squares=((0, 0, 7), (7, 0, 4), (0, 7, 5), (0, 0, 5)))
    reject(bad, 12, "tile 1", "even")


# --------------------------------------------------------------- JSON


def test_json_round_trip(real):
    doc = real.to_json()
    assert set(doc) == {"board", "packer", "seed_tile", "tiles", "zones"}
    assert doc["board"] == {"cells": 61, "pitch": 60}
    assert doc["tiles"][0] == {"id": 0, "x0": real.squares[0][0], "y0": real.squares[0][1], "n": real.squares[0][2] + 1}
    back = from_json(json.dumps(doc))
    assert back == real
    assert back.digest() == real.digest()
    assert from_json(real.canonical_bytes()) == real


def test_from_json_ignores_manifest_extras(real):
    doc = real.to_json()
    doc["format"] = "tiles-manifest/1"
    doc["tiles"][0]["hash"] = "ab" * 32
    doc["tiles"][0]["t"] = 5
    assert from_json(doc) == real


def _mutations():
    def m(f):
        doc = HAND.to_json()
        f(doc)
        return doc

    yield "not json", "{"
    yield "list", []
    yield "missing tiles", m(lambda d: d.pop("tiles"))
    yield "missing board", m(lambda d: d.pop("board"))
    yield "pitch mismatch", m(lambda d: d["board"].update(pitch=11))
    yield "float coord", m(lambda d: d["tiles"][0].update(x0=0.0))
    yield "bool n", m(lambda d: d["tiles"][0].update(n=True))
    yield "string seed", m(lambda d: d.update(seed_tile="0"))
    yield "id order", m(lambda d: d["tiles"][1].update(id=7))
    yield "missing n", m(lambda d: d["tiles"][2].pop("n"))
    yield "rect of 3", m(lambda d: d["zones"][0]["rects"][0].pop())
    yield "zone id", m(lambda d: d["zones"][0].update(id=3))
    yield "rects not list", m(lambda d: d["zones"][0].update(rects="x"))
    yield "packer name", m(lambda d: d["packer"].update(name=5))
    yield "params", m(lambda d: d["packer"].update(params=[]))


@pytest.mark.parametrize("label,doc", list(_mutations()), ids=[m[0] for m in _mutations()])
def test_from_json_rejects_malformed(label, doc):
    with pytest.raises(BadInput):
        from_json(doc if isinstance(doc, str) else json.dumps(doc))


def test_from_json_leaves_geometry_to_the_validator():
    doc = HAND.to_json()
    doc["tiles"][1]["n"] = 7  # s = 6: well-formed JSON, illegal packing
    p = from_json(doc)
    reject(p, 12, "tile 1", "even")


# --------------------------------------------------------------- laws


@settings(max_examples=40, deadline=None)
@given(
    st.integers(6, 90),
    st.binary(min_size=32, max_size=32),
    st.sampled_from(["big-first", "grown", "bands", "substitution", "islands"]),
    st.data(),
)
def test_mutations_of_sound_packings_are_rejected(G, seed, name, data):
    """Law: a sound packing passes; dropping any square, shifting one, or growing one is rejected."""
    p = make_packing(name, G, seed)
    validate_packing(p, G - 1)
    i = data.draw(st.integers(0, len(p.squares) - 1))
    x, y, s = p.squares[i]
    sq = list(p.squares)
    dropped = replace(p, squares=tuple(sq[:i] + sq[i + 1 :]), seed_tile=0)
    if len(sq) > 1:
        with pytest.raises(VerificationFailed, match="gap|seed_tile"):
            validate_packing(dropped, G - 1)
    grown = replace(p, squares=tuple(sq[:i] + [(x, y, s + 2)] + sq[i + 1 :]))
    with pytest.raises(VerificationFailed):
        validate_packing(grown, G - 1)
    dx, dy = data.draw(st.sampled_from([(1, 0), (0, 1), (-1, 0), (0, -1)]))
    moved = replace(p, squares=tuple(sq[:i] + [(x + dx, y + dy, s)] + sq[i + 1 :]))
    with pytest.raises(VerificationFailed):
        validate_packing(moved, G - 1)


def test_group_zones_connects_edge_contact_only():
    rects = [(0, 0, 2, 2), (2, 0, 1, 1), (3, 1, 1, 1), (10, 10, 1, 1), (0, 2, 1, 1)]
    zones = group_zones(rects)
    assert zones == (((0, 0, 2, 2), (2, 0, 1, 1), (0, 2, 1, 1)), ((3, 1, 1, 1),), ((10, 10, 1, 1),))
