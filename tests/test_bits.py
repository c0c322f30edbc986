"""FORMAT §2 encodings: bit order of rows, BLOBs and edges, and puzzle strings."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tilelib import bits
from tilelib.errors import BadInput

GRID = np.array(
    [
        [0, 1, 1, 0, 1, 0],
        [1, 0, 0, 1, 0, 1],
        [0, 0, 1, 1, 0, 1],
        [1, 1, 0, 0, 1, 0],
        [0, 1, 0, 1, 1, 0],
        [1, 0, 1, 0, 0, 1],
    ],
    dtype=np.uint8,
)


def test_row_int_leftmost_cell_is_msb():
    assert bits.row_ints(GRID)[0] == 0b011010
    # bit n-1-c is cell (r, c)
    for r, v in enumerate(bits.row_ints(GRID)):
        for c in range(6):
            assert (v >> (5 - c)) & 1 == GRID[r, c]


def test_edges_read_in_absolute_directions():
    top, right, bottom, left = bits.edges(GRID)
    assert top == 0b011010  # row 0 left→right
    assert bottom == 0b101001  # row 5 left→right
    assert left == 0b010101  # column 0 top→bottom
    assert right == 0b011001  # column 5 top→bottom


def test_blob_is_row_major_msb_first_and_zero_padded():
    bitstring = "".join(str(b) for b in GRID.ravel()) + "0000"  # 36 bits → 40
    expected = int(bitstring, 2).to_bytes(5, "big")
    assert bits.to_blob(GRID) == expected == np.packbits(GRID.ravel()).tobytes()


@given(st.sampled_from(bits.VALID_N + (2, 4)), st.data())
def test_blob_round_trip(n, data):
    cells = data.draw(st.lists(st.integers(0, 1), min_size=n * n, max_size=n * n))
    g = np.array(cells, dtype=np.uint8).reshape(n, n)
    blob = bits.to_blob(g)
    assert len(blob) == bits.blob_len(n)
    assert (bits.from_blob(blob, n) == g).all()


@given(st.sampled_from(bits.VALID_N), st.data())
def test_puzzle_string_round_trip(n, data):
    s = data.draw(st.text(alphabet="01.", min_size=n * n, max_size=n * n))
    p = bits.Puzzle.parse(s)
    assert p.n == n and str(p) == s
    assert ((p.values == 1) <= (p.known == 1)).all()


def test_puzzle_parse_rejects_bad_strings():
    with pytest.raises(BadInput, match="only"):
        bits.Puzzle.parse("01x" + "." * 33)
    with pytest.raises(BadInput, match="length"):
        bits.Puzzle.parse("0" * 35)
    with pytest.raises(BadInput, match="length"):
        bits.Puzzle.parse("0" * 9)  # 3×3: odd side


def test_from_blob_rejects_wrong_length():
    with pytest.raises(BadInput):
        bits.from_blob(b"\x00" * 4, 6)


@given(st.integers(0, (1 << 16) - 1))
def test_reverse_bits_is_an_involution(v):
    assert bits.reverse_bits(bits.reverse_bits(v, 16), 16) == v
    assert bits.reverse_bits(v, 16) == int(format(v, "016b")[::-1], 2)


@given(n=st.sampled_from(bits.VALID_N), data=st.data())
def test_row_int_codec_and_edges_match_the_numpy_grid(n, data):
    """``rows_blob``/``blob_rows``/``row_edges`` (the numpy-free generate path) agree with
    ``to_blob``/``row_ints``/``edges`` on any 0/1 grid, valid or not."""
    cells = data.draw(st.lists(st.integers(0, 1), min_size=n * n, max_size=n * n))
    grid = np.array(cells, dtype=np.uint8).reshape(n, n)
    rows = bits.row_ints(grid)
    assert bits.rows_blob(rows, n) == bits.to_blob(grid)
    assert bits.blob_rows(bits.to_blob(grid), n) == rows
    assert bits.row_edges(rows, n) == bits.edges(grid)
