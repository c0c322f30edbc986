"""The audit's vectorised screen agrees with its reference on every row (issue 69).

``tilelib.audit.bad_rows`` judges many rows at once: a numpy screen proves the sound ones and the
reference, ``stored_row_problems`` (what ``tiles library verify`` runs), decides every row the screen
doubts. So the only way they can disagree is the screen passing a row the reference refuses. These
tests feed both real tiles of every n and m, and those tiles spoiled at random — a byte of a blob
flipped, a column set to another value or another kind of value, the hash recomputed or not — and
require the same verdict row by row.
"""

from __future__ import annotations

import itertools
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from cli_support import run_tiles
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import all_grids, features_of

from tilelib import bits
from tilelib.audit import bad_rows, stored_row_problems
from tilelib.rules import valid_lines, violations
from tilelib.store import TILE_COLUMNS, row_to_tile, tile_row
from tilelib.tile import Tile, content_hash


@pytest.fixture(scope="module")
def sound_rows(tmp_path_factory) -> list[tuple]:
    """Real tiles from the generator: n = 6, 8 and 10, m up to 3, seam masks that pin; seeded, so
    every run (and every mutant's) reads the same rows."""
    lib = tmp_path_factory.mktemp("audit") / "lib.sqlite"
    for k, (n, seam) in enumerate(((6, 15), (6, 0), (8, 5), (10, 15))):
        r = run_tiles(
            "library",
            "generate",
            "-L",
            str(lib),
            "--n",
            str(n),
            "--count",
            "40",
            "--m-max",
            "3",
            "--seam-mask",
            str(seam),
            "--seed",
            f"{k + 1:064x}",
        )
        assert r.returncode == 0, r.stderr
    conn = sqlite3.connect(lib)
    rows = conn.execute(f"SELECT {', '.join(TILE_COLUMNS)} FROM tiles ORDER BY rowid").fetchall()
    conn.close()
    assert {r[TILE_COLUMNS.index("m")] for r in rows} >= {1, 2, 3}
    return rows


def reference_bad(rows: list[tuple]) -> list[int]:
    return [i for i, r in enumerate(rows) if stored_row_problems(dict(zip(TILE_COLUMNS, r, strict=True)))]


def test_every_sound_row_passes(sound_rows):
    assert reference_bad(sound_rows) == [] and bad_rows(sound_rows) == []


BLOBS = ("solution", "givens", "flip", "alts")
VALUES = st.one_of(
    st.integers(-3, 70_000), st.floats(allow_nan=True), st.text(max_size=3), st.binary(max_size=40), st.none()
)


@st.composite
def spoiled(draw, rows: list[tuple]) -> tuple:
    """A sound row changed one to three ways, its hash recomputed or not."""
    row = dict(zip(TILE_COLUMNS, draw(st.sampled_from(rows)), strict=True))
    for _ in range(draw(st.integers(1, 3))):
        col = draw(st.sampled_from(TILE_COLUMNS))
        how = draw(st.sampled_from(["flip a bit", "small change", "any value"]))
        if how == "flip a bit" and col in BLOBS and isinstance(row[col], bytes) and row[col]:
            blob = bytearray(row[col])
            at = draw(st.integers(0, len(blob) * 8 - 1))
            blob[at // 8] ^= 1 << (at % 8)
            row[col] = bytes(blob)
        elif how == "small change" and isinstance(row[col], int):
            row[col] = row[col] + draw(st.sampled_from([-1, 1, 2, 16]))
        elif how == "small change" and isinstance(row[col], float):
            row[col] = row[col] + draw(st.sampled_from([1e-6, -1e-6, 1 / 36]))
        else:
            row[col] = draw(VALUES)
    if draw(st.booleans()):
        try:
            row["hash"] = content_hash(row["n"], bytes(row["solution"]), bytes(row["givens"]), row["seam_mask"])
        except (TypeError, ValueError):
            pass
    return tuple(row[c] for c in TILE_COLUMNS)


@settings(
    max_examples=400,
    deadline=None,
    # generating rows is slow on a loaded machine; that is no finding
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_the_screen_never_passes_a_row_the_reference_refuses(sound_rows, data):
    batch = [data.draw(spoiled(sound_rows)) for _ in range(data.draw(st.integers(1, 6)))]
    batch += random.Random(len(batch)).sample(sound_rows, 4)  # sound neighbours share the numpy groups
    assert [i for i, _ in bad_rows(batch)] == reference_bad(batch)


def test_each_spoiled_field_is_caught(sound_rows):
    """One hand-made case per feature the screen proves, each refused by both."""
    m = TILE_COLUMNS.index("m")
    multi = next(r for r in sound_rows if r[m] == 3)
    changes = {"top": multi[TILE_COLUMNS.index("top")] ^ 1, "pins": 0, "pin_depth": 4, "alt_sides": 0, "blank": 0.5}
    for col, value in changes.items():
        row = list(multi)
        row[TILE_COLUMNS.index(col)] = value
        assert reference_bad([tuple(row)]) == [0] and [i for i, _ in bad_rows([tuple(row)])] == [0], col
    # a seam mask the alternatives do not all differ on (the pinning invariant), the hash made right
    seam, sides = TILE_COLUMNS.index("seam_mask"), multi[TILE_COLUMNS.index("alt_sides")]
    nibbles = [(sides >> 4 * i) & 15 for i in range(multi[m] - 1)]
    unpinned = [s for s in range(16) if any(not (s & nb) for nb in nibbles)]
    assert unpinned
    caught = 0
    for s in unpinned:
        row = list(multi)
        row[seam] = s
        row[0] = content_hash(row[1], row[TILE_COLUMNS.index("solution")], row[TILE_COLUMNS.index("givens")], s)
        assert reference_bad([tuple(row)]) == [0] and [i for i, _ in bad_rows([tuple(row)])] == [0], s
        caught += 1
    assert caught == len(unpinned)
    bl = len(multi[TILE_COLUMNS.index("solution")])
    alts = multi[TILE_COLUMNS.index("alts")]
    swapped = list(multi)
    swapped[TILE_COLUMNS.index("alts")] = alts[bl:] + alts[:bl]  # not ascending
    assert [i for i, _ in bad_rows([tuple(swapped)])] == [0]


def test_bad_rows_is_what_the_checks_and_verify_use():
    """The gate is called by the publish and snapshot checks, merges and verify (one way per job)."""
    root = Path(__file__).resolve().parents[1]
    for path in ("trust/checks.py", "tilelib/merge.py"):
        text = (root / path).read_text()
        assert "check_stored_rows(" in text or "bad_rows(" in text, path


def test_every_other_orientation_of_a_tile_is_refused(sound_rows):
    """Each of the 15 other images of a stored tile (edges, hash and features moved with it) is not
    in canonical orientation: the screen's reading of the 16 images must refuse every one that the
    reference refuses, and pass none of them."""
    from tilelib.store import row_to_tile, tile_row

    images = []
    for values in sound_rows[::12]:
        tile = row_to_tile(dict(zip(TILE_COLUMNS, values, strict=True)))
        images += [tile_row(tile.transform(t), 1_700_000_000) for t in range(1, 16)]
    want = reference_bad(images)
    assert len(want) > len(images) // 2  # most images are not canonical (symmetric tiles may be)
    assert [i for i, _ in bad_rows(images)] == want


def symmetric(values: tuple) -> bool:
    """Whether a row's solution equals one of its 15 other images (then the givens decide canonical)."""
    from tilelib.store import row_to_tile

    tile = row_to_tile(dict(zip(TILE_COLUMNS, values, strict=True)))
    return any(tile.transform(t).solution == tile.solution for t in range(1, 16))


def test_the_screen_proves_every_sound_row(sound_rows):
    """The screen is the fast path: it must admit every sound row and prove each one whose solution
    is not symmetric (doubting a sound row costs the reference's time on it; a screen that doubts
    everything would pass the tests above and lose the speed the batch exists for)."""
    from tilelib.audit import _C, _plain, _screen

    assert all(_plain(r) for r in sound_rows)
    groups: dict[tuple[int, int], list[tuple]] = {}
    for r in sound_rows:
        groups.setdefault((r[_C["n"]], r[_C["m"]]), []).append(r)
    assert {m for _, m in groups} == {1, 2, 3}
    for (n, m), rows in groups.items():
        proved = _screen(n, m, rows).tolist()
        assert proved == [not symmetric(r) for r in rows], (n, m)


def with_values(values: tuple, rehash: bool = True, **changes) -> tuple:
    row = dict(zip(TILE_COLUMNS, values, strict=True)) | changes
    if rehash:
        row["hash"] = content_hash(row["n"], row["solution"], row["givens"], row["seam_mask"])
    return tuple(row[c] for c in TILE_COLUMNS)


def test_a_value_of_the_wrong_kind_is_named_with_its_kind(sound_rows):
    """The first column holding the wrong kind of value, named with the kind it holds."""
    row = sound_rows[0]
    cases = {
        "column blank holds a int": with_values(row, False, blank=0),
        "column hash holds a bytes": with_values(row, False, hash=b"ab"),
        "column n holds a bool": with_values(row, False, n=True),
        "column solution holds a str": with_values(row, False, solution="x"),
        "column blank holds a NoneType": with_values(row, False, blank=None, hash=None),  # the first only
    }
    for want, bad in cases.items():
        assert stored_row_problems(dict(zip(TILE_COLUMNS, bad, strict=True))) == [want]
        assert bad_rows([bad]) == [(0, [want])]


def test_rows_at_the_edges_of_the_screen_go_to_the_reference(sound_rows):
    """Rows the screen must not judge — a seam mask past 4 bits, a nibble past the alternatives —
    are refused, their hashes made right."""
    m = TILE_COLUMNS.index("m")
    one = next(r for r in sound_rows if r[m] == 1)
    two = next(r for r in sound_rows if r[m] == 2)
    for bad in (
        with_values(one, seam_mask=16),
        with_values(two, alt_sides=two[TILE_COLUMNS.index("alt_sides")] | 1 << 4),
        with_values(one, m=0),
    ):
        assert [i for i, _ in bad_rows([bad])] == [0] == reference_bad([bad])


def test_the_gate_names_the_first_bad_row_and_what_is_wrong(sound_rows):
    """``check_stored_rows``: nothing for sound rows; for the first bad row, HashMismatch when its
    content does not hash to its key, CorruptLibrary with its first problem, or that it is malformed."""
    from tilelib.audit import check_stored_rows
    from tilelib.errors import CorruptLibrary, HashMismatch

    def where(i: int) -> str:
        return f"test row {i}"

    assert check_stored_rows(sound_rows, where) is None
    good = sound_rows[:3]
    row = dict(zip(TILE_COLUMNS, good[0], strict=True))
    changed = with_values(good[0], False, seam_mask=row["seam_mask"] ^ 1)
    actual = content_hash(row["n"], row["solution"], row["givens"], row["seam_mask"] ^ 1)
    with pytest.raises(HashMismatch) as err:
        check_stored_rows([*good[1:], changed, with_values(good[0], blank=0.5)], where)
    assert str(err.value) == (
        f"test row 2 ({row['hash']}) hashes to {actual}: its content was changed after it was stored"
    )
    unsound = with_values(good[1], blank=0.5)
    problem = stored_row_problems(dict(zip(TILE_COLUMNS, unsound, strict=True)))[0]
    with pytest.raises(CorruptLibrary) as err:
        check_stored_rows([good[0], unsound], where)
    assert str(err.value) == f"test row 1 ({unsound[0]}) is not a sound tile: {problem}"
    assert not isinstance(err.value, HashMismatch)
    malformed = with_values(good[2], False, solution=None)
    with pytest.raises(CorruptLibrary) as err:
        check_stored_rows([malformed], where)
    assert str(err.value).startswith(f"test row 0 ({good[2][0]}) is malformed (")


# ---------------------------------------------------------------- the screen's parts against the reference


def forged(sol: np.ndarray, giv: np.ndarray, alts: list[np.ndarray], seam: int) -> tuple:
    """A row whose every derived column agrees with the grids given — hash, edge columns, blank,
    alt_sides, pins, pin_depth, flip (``support.features_of``) — whatever the grids are, so that a
    defect planted in them is the only thing wrong with it. The alternatives are stored in the order
    given."""
    return tile_row(Tile(len(sol), bits.to_blob(sol), bits.to_blob(giv), seam, features_of(sol, giv, alts)), 1)


def canonical_forged(sol: np.ndarray, giv: np.ndarray, seam: int) -> tuple:
    """An m = 1 row of a solution (sound or not) in its canonical orientation, so the screen's
    reading of the 16 images cannot be what doubts it."""
    tile = Tile(len(sol), bits.to_blob(sol), bits.to_blob(giv), seam).canonical()[0]
    return forged(tile.solution_grid, tile.givens_grid, [], tile.seam_mask)


def unsound_solutions(sound: np.ndarray) -> dict[str, np.ndarray]:
    """Grids that break one rule each, made from a sound solution: two rows swapped so that a column
    breaks (every row still a valid line), and a grid of valid lines with two equal rows."""
    out = {}
    n = len(sound)
    for i, j in itertools.combinations(range(n), 2):
        g = sound.copy()
        g[[i, j]] = g[[j, i]]
        if violations(g):
            out["a column breaks, every row valid"] = g
            break
    out["two equal rows, every line valid"] = EQUAL_ROWS
    return out


# a 6 x 6 grid whose every row and column is a valid line and whose columns are distinct, but whose
# rows 0 and 3 are equal
EQUAL_ROWS = np.array(
    [
        [1, 0, 1, 0, 1, 0],
        [1, 1, 0, 1, 0, 0],
        [0, 0, 1, 1, 0, 1],
        [1, 0, 1, 0, 1, 0],
        [0, 1, 0, 0, 1, 1],
        [0, 1, 0, 1, 0, 1],
    ],
    dtype=np.uint8,
)


def test_the_line_reading_is_the_rules(sound_rows):
    """``_lines`` on a batch of grids — sound ones, ones of valid rows whose columns break, their
    transposes, ones of valid lines with two equal rows or columns — reads each row and column as
    ``bits.line_int`` does and keeps exactly the grids ``rules.violations`` passes."""
    from tilelib.audit import _lines

    rng = np.random.default_rng(7)
    lines = [bits.int_line(v, 6) for v in valid_lines(6)]
    grids = [row_to_tile(dict(zip(TILE_COLUMNS, r, strict=True))).solution_grid for r in sound_rows if r[1] == 6]
    grids += [np.array([lines[i] for i in rng.integers(len(lines), size=6)], dtype=np.uint8) for _ in range(300)]
    grids += [g.T for g in grids[-300:]]
    grids += [EQUAL_ROWS, EQUAL_ROWS.T]
    cells = np.stack(grids)
    rows, cols, ok = _lines(cells, 6)
    assert rows.tolist() == [[bits.line_int(r) for r in g] for g in grids]
    assert cols.tolist() == [[bits.line_int(c) for c in g.T] for g in grids]
    want = [not violations(g) for g in grids]
    assert ok.tolist() == want
    assert 0 < sum(want) < len(want) - 300  # both kinds, many of each


def test_the_canonical_reading_is_the_transforms():
    """``_solution_smallest`` proves exactly the solutions whose blob is smaller than each of their 15
    other images, as ``Tile.transform`` makes them."""
    from tilelib.audit import _lines, _solution_smallest

    grids = all_grids(6)[::7]
    rows, cols, _ = _lines(np.stack(grids), 6)
    want = []
    for g in grids:
        tile = Tile(6, bits.to_blob(g), bytes(bits.blob_len(6)), 0)
        want.append(all(tile.transform(t).solution > tile.solution for t in range(1, 16)))
    assert _solution_smallest(rows, cols, 6).tolist() == want
    assert 0 < sum(want) < len(want)


def test_the_screen_on_a_group_with_one_defect_each(sound_rows):
    """A group of sound rows and forged rows that are consistent in every derived column but carry
    one defect each — a rule broken, a corner given, an alternative that breaks the rules, equals the
    solution, contradicts a given, is not pinned by the seam mask, or is stored twice: the screen
    proves exactly the sound rows it may (every defect doubted, no sound row doubted beside one)."""
    from tilelib.audit import _screen

    m_at = TILE_COLUMNS.index("m")
    # the defects are planted in rows the screen would prove: a symmetric solution is doubted anyway
    ones = [r for r in sound_rows if r[1] == 6 and r[m_at] == 1 and not symmetric(r)]
    threes = [r for r in sound_rows if r[1] == 6 and r[m_at] == 3 and not symmetric(r)]
    assert ones and threes
    base = row_to_tile(dict(zip(TILE_COLUMNS, ones[0], strict=True)))
    bad_ones = {k: canonical_forged(g, base.givens_grid, 15) for k, g in unsound_solutions(base.solution_grid).items()}
    for r, c in ((0, 0), (0, -1), (-1, 0), (-1, -1)):
        giv = base.givens_grid.copy()
        giv[r, c] = 1
        bad_ones[f"corner {r, c} given"] = forged(base.solution_grid, giv, [], base.seam_mask)
    top = TILE_COLUMNS.index("top")
    lie = list(ones[0])
    lie[top] ^= 1
    bad_ones["an edge column that lies"] = tuple(lie)
    t = row_to_tile(dict(zip(TILE_COLUMNS, threes[0], strict=True)))
    sol, giv, alts = t.solution_grid, t.givens_grid, t.alt_grids()
    broken = alts[0].copy()
    r, c = next((r, c) for r, c in np.argwhere(giv == 0) if 0 < r < 5 and 0 < c < 5)
    broken[r, c] ^= 1
    contradicted = giv.copy()
    r, c = next((r, c) for r, c in np.argwhere(alts[0] != sol) if (r, c) not in ((0, 0), (0, 5), (5, 0), (5, 5)))
    contradicted[r, c] = 1
    side0 = [s for s in range(4) if bits.edges(alts[0])[s] != t.edges[s]]
    bad_threes = {
        "an alternative breaks the rules": forged(sol, giv, sorted([broken, alts[1]], key=bits.to_blob), 15),
        "an alternative equals the solution": forged(sol, giv, sorted([sol, alts[1]], key=bits.to_blob), 15),
        "an alternative contradicts a given": forged(sol, contradicted, alts, t.seam_mask),
        "an alternative the seam mask does not pin": forged(sol, giv, alts, 15 & ~sum(1 << s for s in side0)),
        "an alternative stored twice": forged(sol, giv, [alts[0], alts[0]], t.seam_mask),
    }
    # alts [A, A, B]: slices of each alternative and the next would read as ascending
    four = forged(sol, giv, [alts[0], alts[0], alts[1]], t.seam_mask)
    assert reference_bad([four]) == [0] and _screen(6, 4, [four]).tolist() == [False]
    for m, good, bad in ((1, ones, bad_ones), (3, threes, bad_threes)):
        for what, row in bad.items():
            assert reference_bad([row]) == [0], what
            group = [*good[:6], row, *good[6:12]]
            proved = _screen(6, m, group).tolist()
            assert proved == [not reference_bad([g]) and not symmetric(g) for g in group], what
            assert proved[6] is False and sum(proved) > 6, what


def test_rows_the_screen_must_not_judge_are_refused_not_crashed_on(sound_rows):
    """n stored as a float or as an int that is no tile size, and an m = 1 row with a side nibble:
    the reference's to judge."""
    m_at = TILE_COLUMNS.index("m")
    one = next(r for r in sound_rows if r[m_at] == 1)
    cases = {
        "column n holds a float": with_values(one, False, n=float(one[1])),
        "alt_sides has nibbles beyond the alternatives": with_values(one, alt_sides=1),
    }
    for want, row in cases.items():
        assert bad_rows([row]) == [(0, [want])], want
    for blob in ("solution", "givens", "flip"):  # one blob a byte short, the others of their length
        short = with_values(one, **{blob: one[TILE_COLUMNS.index(blob)][:-1]})
        assert [i for i, _ in bad_rows([short])] == [0] == reference_bad([short]), blob
    # an int n that is no tile size, with blobs of its own length and a sound 4 x 4 solution
    small = np.array([[0, 0, 1, 1], [1, 1, 0, 0], [0, 1, 1, 0], [1, 0, 0, 1]], dtype=np.uint8)  # no symmetry
    four = canonical_forged(small, np.zeros((4, 4), dtype=np.uint8), 15)
    assert bad_rows([four]) == [(0, ["n = 4 is not a tile size"])]
    changed = with_values(one, False, seam_mask=one[TILE_COLUMNS.index("seam_mask")] ^ 1)
    sol, giv, seam = (changed[TILE_COLUMNS.index(c)] for c in ("solution", "givens", "seam_mask"))
    actual = content_hash(one[1], sol, giv, seam)
    assert stored_row_problems(dict(zip(TILE_COLUMNS, changed, strict=True))) == [
        f"tile {one[0]}: content hashes to {actual}"
    ]
