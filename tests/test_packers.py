"""The five packers: goldens, determinism, soundness over many seeds, quality targets, fill laws, render."""

from __future__ import annotations

import collections
import hashlib
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packers import DEFAULT_PACKER, PACKERS, make_packing
from packers.fill import DP_MAX, Out, dp_fill, euclid_fill, rep, skyline_fill, split_length, zone_table
from packers.packing import SIZES, Packing, group_zones, validate_packing
from packers.render import ColouringFailed, adjacency, colour_tiles, png_bytes, render_index, render_png
from tilelib.errors import BadInput
from tilelib.rng import Stream

NAMES = ["big-first", "grown", "bands", "substitution", "islands"]
GOLDEN_SEED = bytes.fromhex("5eed" * 16)

# sha256 of Packing.canonical_bytes() at G = 1000 for GOLDEN_SEED, default params.
# Changing a packer's output on purpose means bumping its VERSION and these values.
GOLDEN = {
    "big-first": "41f1b68679e96c58f98862204d2a363c2723625622215315dbf8da5aa8f80cd0",
    "grown": "76fe9adda94d61032989506e5f48e8172ed586176e7ccbda2bb9573afe0493f7",
    "bands": "b0dc949a1258002f17350843adf646cdb4c6da8b161ed1979137f0e358454f67",
    "substitution": "e091f814124569a186044332df32d6693718f586cf66f54e564ae9b024b6a56d",
    "islands": "5b06100399e0295c541eca80bf722e23dfd94693e583b18be741c3764e816892",
}
# Exact (tiles, zones, zone area, seed tile) at G = 1000: a second checksum that says what changed.
GOLDEN_COUNTS = {
    "big-first": (19120, 35, 1697, 0),
    "grown": (12685, 10, 548, 0),
    "bands": (10649, 70, 1560, 1004),
    "substitution": (11145, 0, 0, 3376),
    "islands": (28945, 1, 7976, 0),  # zone: the 4-unit strips, 4 * 999 + 4 * 995
}


@pytest.fixture(scope="module")
def golden() -> dict[str, Packing]:
    return {name: make_packing(name, 1000, GOLDEN_SEED) for name in NAMES}


def test_registry():
    assert sorted(PACKERS) == sorted(NAMES)
    assert DEFAULT_PACKER == "big-first"
    for name, p in PACKERS.items():
        assert p.name == name and type(p.version) is int and p.version >= 1


@pytest.mark.parametrize("name", NAMES)
def test_golden_digest(golden, name):
    p = golden[name]
    validate_packing(p, 999)
    counts = (len(p.squares), len(p.zones), p.zone_area(), p.seed_tile)
    assert counts == GOLDEN_COUNTS[name]
    assert p.digest() == GOLDEN[name]


@pytest.mark.parametrize("name", NAMES)
def test_quality_at_1000(golden, name):
    """FORMAT §7 targets: zone < 1% for big-first, grown and islands, < 3% for bands (substitution: a knob)."""
    limit = {"big-first": 0.01, "grown": 0.01, "bands": 0.03, "substitution": 0.03, "islands": 0.01}[name]
    assert golden[name].zone_fraction() < limit


def test_substitution_rule_closes_on_default_blocks(golden):
    """The default block sides are pairwise zero-zone under the rule, and 999 is a sum of them."""
    from packers.fill import zone_table
    from packers.substitution import DEFAULTS, rule_leaves

    Z = zone_table()
    for a in DEFAULTS["blocks"]:
        for b in DEFAULTS["blocks"]:
            assert Z[a, b] == 0
            assert all(kind == "sq" for (kind, *_r) in rule_leaves(a, b))
    assert golden["substitution"].zones == ()


def test_big_first_puts_big_squares_first(golden):
    p = golden["big-first"]
    sides = [s for (_x, _y, s) in p.squares]
    k = next(i for i, s in enumerate(sides) if s < 13)
    assert k > 400  # hundreds of 13/15 squares lead the list
    assert p.seed_tile == 0 and sides[0] in (13, 15)


def test_big_first_seed_tile_is_a_big_square_near_the_seed_point():
    for k in range(6):
        seed = hashlib.sha256(b"big-seed-%d" % k).digest()
        p = make_packing("big-first", 1000, seed)
        r = Stream(seed, "pack/big-first")
        px, py = r.randbelow(999), r.randbelow(999)  # the packer's first two draws
        x, y, s = p.squares[p.seed_tile]
        assert p.seed_tile == 0 and s in (13, 15)
        # Aimed at the seed point: nearest feasible column within a cell's width, and the
        # seed's cell row or soon after (a crowded row delays it).
        assert abs(2 * x + s - 2 * px) <= 2 * 45
        assert abs(y - py) <= 2 * 45


def _touch(a, b) -> bool:
    """Closed pitch squares a and b share a point: their windows share a cell (FORMAT §6)."""
    (xa, ya, sa), (xb, yb, sb) = a, b
    return xa <= xb + sb and xb <= xa + sa and ya <= yb + sb and yb <= ya + sa


@settings(max_examples=40, deadline=None)
@given(st.integers(6, 160), st.binary(min_size=32, max_size=32), st.integers(0, 100))
def test_islands_never_touch_and_the_sea_is_n6(G, seed, density):
    """Every square is an n = 16 island or an n = 6 sea tile; no two islands touch, so every n = 6
    tile touches at most one island; the zone is exactly the P mod 5 strips."""
    p = make_packing("islands", G, seed, {"density": density})
    validate_packing(p, G - 1)
    isl = [q for q in p.squares if q[2] == 15]
    assert all(s in (5, 15) for (_x, _y, s) in p.squares)
    assert not any(_touch(a, b) for i, a in enumerate(isl) for b in isl[i + 1 :])
    for q in p.squares:
        if q[2] == 5:
            assert sum(_touch(q, b) for b in isl) <= 1
    r = (G - 1) % 5
    assert p.zone_area() == (G - 1) * r + (G - 1 - r) * r
    if isl and p.squares[p.seed_tile][2] == 15:
        assert p.seed_tile == 0


def test_islands_seed_cell_gets_the_first_island(golden):
    """The seed tile is the seed cell's island, id 0; the other islands follow, then the sea."""
    p = golden["islands"]
    sizes = [s for (_x, _y, s) in p.squares]
    k = sizes.count(15)
    assert p.seed_tile == 0 and sizes[:k] == [15] * k and set(sizes[k:]) == {5}


def test_grown_lists_tiles_in_growth_order(golden):
    p = golden["grown"]
    x, y, s = p.squares[0]
    cx, cy = 2 * x + s, 2 * y + s
    d = [max(abs(2 * a + t - cx), abs(2 * b + t - cy)) for (a, b, t) in p.squares[1:]]
    assert d == sorted(d)


def test_params_are_recorded_and_reproduce(golden):
    """The referee re-draws from (name, params, seed): the recorded params must reproduce the packing."""
    for name, p in golden.items():
        assert set(p.params) == set(PACKERS[name].defaults)
        assert make_packing(name, 1000, GOLDEN_SEED, dict(p.params)) == p


def test_variant_params_change_the_packing():
    a = make_packing("bands", 300, GOLDEN_SEED)
    b = make_packing("bands", 300, GOLDEN_SEED, {"sub": 60})
    validate_packing(b, 299)
    assert a != b and b.params == {"sub": 60}
    fives = collections.Counter(s for (_x, _y, s) in b.squares)[5]
    assert fives > collections.Counter(s for (_x, _y, s) in a.squares)[5]


@pytest.mark.parametrize(
    "name,params",
    [
        ("bands", {"sub": 101}),
        ("bands", {"x": 1}),
        ("grown", {"weights": [1, 2]}),
        ("grown", {"greedy": -1}),
        ("big-first", {"cell_min": 10}),
        ("big-first", {"density": "a"}),
        ("substitution", {"cell_max": 45}),
        ("substitution", {"blocks": []}),
        ("substitution", {"blocks": [35, 99]}),
        ("islands", {"cell_min": 27}),
        ("islands", {"cell_min": 20}),
        ("islands", {"cell_min": 35, "cell_max": 30}),
        ("islands", {"cell_max": 65}),
        ("islands", {"density": 101}),
        ("islands", {"density": 5.0}),
        ("islands", {"weights": [1, 0, 0, 0, 0, 0]}),
    ],
)
def test_bad_params(name, params):
    with pytest.raises(BadInput):
        make_packing(name, 100, GOLDEN_SEED, params)


@pytest.mark.parametrize("G", [5, 0, -3, 10.0, "100", True, 4097])
def test_bad_sizes(G):
    with pytest.raises(BadInput):
        make_packing("bands", G, GOLDEN_SEED)


def test_unknown_packer():
    with pytest.raises(BadInput, match="unknown packer"):
        make_packing("mondrian", 100, GOLDEN_SEED)


def test_hundred_random_seeds_are_sound():
    """Every packer's output validates on 100 seeds: sizes drawn from the seed (6..160), plus 1000 for a few."""
    r = Stream(b"test-seeds" + bytes(22), "sizes")
    for k in range(100):
        seed = hashlib.sha256(b"seed-%d" % k).digest()
        G = 1000 if k < 2 else [6, 7, 8, 9, 11, 16, 61][k - 2] if k < 9 else r.randint(6, 160)
        for name in NAMES:
            p = make_packing(name, G, seed)
            validate_packing(p, G - 1)
            assert p.P == G - 1 and p.name == name


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_and_seed_sensitive(name):
    a = make_packing(name, 200, GOLDEN_SEED)
    assert make_packing(name, 200, GOLDEN_SEED) == a
    assert make_packing(name, 200, bytes(32)) != a


def test_determinism_across_processes(golden):
    code = (
        "from packers import make_packing; import sys\n"
        f"for n in {NAMES!r}:\n"
        "    print(make_packing(n, 1000, bytes.fromhex('5eed'*16)).digest())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    ).stdout.split()
    assert out == [golden[n].digest() for n in NAMES]


# --------------------------------------------------------------- fill laws


def test_rep_is_exactly_sums_of_legal_sides():
    sums = {0}
    for _ in range(40):
        sums |= {a + s for a in sums for s in SIZES if a + s <= 200}
    for L in range(1, 201):
        assert rep(L) == (L in sums), L
    assert [L for L in range(1, 40) if not rep(L)] == [1, 2, 3, 4, 6, 8]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.binary(min_size=1, max_size=8))
def test_split_length(L, seed):
    parts = split_length(L, list(SIZES), Stream(seed, "t"))
    assert sum(parts) == L
    if rep(L):
        assert all(p in SIZES for p in parts)


def _as_packing(P: int, out: Out) -> Packing:
    return Packing(P=P, squares=tuple(out.squares), zones=group_zones(out.zones), seed_tile=0)


def _check_rect_fill(w: int, h: int, out: Out) -> None:
    """The fill of a w×h rectangle at the origin partitions it (validated inside a w×h 'board')."""
    if w == h:
        if out.squares:
            validate_packing(_as_packing(w, out), w)
    grid = np.zeros((h, w), dtype=np.int32)
    for x, y, s in out.squares:
        assert s in SIZES
        grid[y : y + s, x : x + s] += 1
    for x, y, a, b in out.zones:
        assert a > 0 and b > 0
        grid[y : y + b, x : x + a] += 1
    assert (grid == 1).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 80), st.integers(1, 80))
def test_euclid_fill_partitions(w, h):
    out = Out()
    euclid_fill(0, 0, w, h, out)
    _check_rect_fill(w, h, out)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, DP_MAX), st.integers(1, DP_MAX), st.binary(min_size=1, max_size=8))
def test_dp_fill_partitions_with_least_zone(w, h, seed):
    out = Out()
    dp_fill(0, 0, w, h, Stream(seed, "t"), out)
    _check_rect_fill(w, h, out)
    assert sum(a * b for (_x, _y, a, b) in out.zones) == zone_table()[w, h]


def test_zone_table_known_values():
    Z = zone_table()
    assert Z[5, 5] == 0 and Z[15, 10] == 0 and Z[45, 35] == 0 and Z[63, 45] == 0
    assert Z[5, 7] == 10 and Z[4, 9] == 36 and Z[6, 6] == 11 and Z[12, 12] > 0


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 120),
    st.integers(1, 120),
    st.binary(min_size=1, max_size=8),
    st.integers(0, 100),
    st.integers(0, 100),
)
def test_skyline_fill_partitions(L, T, seed, greedy, align):
    sq, zn = skyline_fill(L, T, Stream(seed, "t"), {s: 1 for s in SIZES}, greedy=greedy, align=align)
    out = Out(squares=sq, zones=zn)
    _check_rect_fill(L, T, out)


# --------------------------------------------------------------- render


@pytest.mark.parametrize("name", NAMES)
def test_seven_colouring_is_proper(golden, name):
    p = golden[name]
    colours = colour_tiles(p.squares)
    nbrs = adjacency(p.squares)
    assert max(colours) < 7 and min(colours) >= 0
    assert all(colours[i] != colours[j] for i in range(len(nbrs)) for j in nbrs[i])


def test_colouring_reports_when_hues_run_out():
    # Four 5-squares meeting at one point are pairwise adjacent: 3 hues are not enough.
    sq = [(0, 0, 5), (5, 0, 5), (0, 5, 5), (5, 5, 5)]
    assert sorted(colour_tiles(sq, k=4)) == [0, 1, 2, 3]
    with pytest.raises(ColouringFailed):
        colour_tiles(sq, k=3)


def test_adjacency_counts_corners_and_seams():
    sq = [(0, 0, 5), (5, 0, 5), (5, 5, 5), (11, 0, 5)]
    assert adjacency(sq) == [[1, 2], [0, 2], [0, 1], []]


@pytest.mark.parametrize("name", NAMES)
def test_neighbours_are_the_definition_and_each_answer_is_the_callers_own(golden, name):
    """``adjacency`` and ``seam_neighbours`` keep the last packings' answers (a night asks seven
    times): against the pairwise definition, for the squares as tuples and as lists, and what one
    caller changes in its answer (the stitch grows its own) never reaches the next caller's."""
    from packers.packing import seam_neighbours

    sq = [tuple(map(int, q)) for q in golden[name].squares]
    meet = [
        sorted(
            j
            for j, (xj, yj, sj) in enumerate(sq)
            if j != i and xi <= xj + sj and xj <= xi + si and yi <= yj + sj and yj <= yi + si
        )
        for i, (xi, yi, si) in enumerate(sq)
    ]

    def seam(i: int, j: int) -> bool:
        (xi, yi, si), (xj, yj, sj) = sq[i], sq[j]
        ox, oy = min(xi + si, xj + sj) - max(xi, xj), min(yi + si, yj + sj) - max(yi, yj)
        return ox >= 0 and oy >= 0 and max(ox, oy) >= 1

    seams = [{j for j in meet[i] if seam(i, j)} for i in range(len(sq))]
    for form in (tuple(sq), [list(q) for q in sq]):
        got, got_seams = adjacency(form), seam_neighbours(form)
        assert got == meet and got_seams == seams
        got[0].append(-1)
        got_seams[0].add(-1)
    assert adjacency(tuple(sq)) == meet and seam_neighbours(tuple(sq)) == seams


def _read_png(data: bytes) -> tuple[int, int, bytes, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        tag, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n : pos + 12 + n])
        assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF
        chunks[tag] = chunks.get(tag, b"") + body
        pos += 12 + n
    w, h, depth, ctype = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, ctype) == (8, 3)
    return w, h, chunks[b"PLTE"], zlib.decompress(chunks[b"IDAT"])


def test_png_round_trip():
    idx = np.arange(12, dtype=np.uint8).reshape(3, 4) % 3
    w, h, plte, raw = _read_png(png_bytes(idx, [(1, 2, 3), (4, 5, 6), (7, 8, 9)]))
    assert (w, h, plte) == (4, 3, bytes(range(1, 10)))
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(3, 5)
    assert (rows[:, 0] == 0).all() and (rows[:, 1:] == idx).all()


def test_render_draws_tiles_and_grey_zones():
    p = Packing(
        P=12, squares=((0, 0, 7), (7, 0, 5), (0, 7, 5), (5, 7, 5)), zones=(((7, 5, 5, 2), (10, 7, 2, 5)),), seed_tile=0
    )
    img, palette = render_index(p, scale=4)
    assert img.shape == (48, 48)
    grey = palette.index((0xC8, 0xC8, 0xC8))
    assert img[4 * 6, 4 * 10] == grey  # inside the zone
    assert img[4 * 9, 4 * 2] < 7  # inside tile 2: a hue
    w, h, _plte, _raw = _read_png(render_png(p, scale=4))
    assert (w, h) == (48, 48)


_weights = st.lists(st.integers(0, 5), min_size=6, max_size=6).filter(lambda w: sum(w) > 0)
_params = {
    "bands": st.fixed_dictionaries({"sub": st.integers(0, 100)}),
    "grown": st.fixed_dictionaries(
        {"greedy": st.integers(0, 100), "align": st.integers(0, 100), "weights": _weights, "seed_weights": _weights}
    ),
    "big-first": st.tuples(st.integers(15, DP_MAX), st.integers(0, DP_MAX - 15)).flatmap(
        lambda t: st.fixed_dictionaries(
            {
                "cell_min": st.just(t[0]),
                "cell_max": st.just(min(DP_MAX, t[0] + t[1])),
                "density": st.integers(0, 100),
                "align": st.integers(0, 100),
                "weights": _weights,
            }
        )
    ),
    "substitution": st.fixed_dictionaries({"blocks": st.lists(st.integers(15, DP_MAX), min_size=1, max_size=4)}),
    "islands": st.tuples(st.integers(5, 12), st.integers(0, 7)).flatmap(
        lambda t: st.fixed_dictionaries(
            {
                "cell_min": st.just(5 * t[0]),
                "cell_max": st.just(5 * min(12, t[0] + t[1])),
                "density": st.integers(0, 100),
            }
        )
    ),
}


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(NAMES).flatmap(lambda n: st.tuples(st.just(n), _params[n])),
    st.integers(6, 150),
    st.binary(min_size=32, max_size=32),
)
def test_any_valid_params_give_sound_packings(name_params, G, seed):
    name, params = name_params
    p = make_packing(name, G, seed, params)
    validate_packing(p, G - 1)
    assert dict(p.params) == {**PACKERS[name].defaults, **params}
