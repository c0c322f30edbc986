"""tilelib._sym (C) against the numpy reference: every transform of random BLOBs, and the canonical t."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tilelib import _sym, bits
from tilelib.tile import Tile, canonical_rows, canonical_transform_py, grid_image, grid_image_py, seam_images


@st.composite
def blobs(draw, n=None):
    n = n or draw(st.sampled_from((2, 4, 6, 8, 10, 12, 14, 16)))
    cells = draw(st.lists(st.integers(0, 1), min_size=n * n, max_size=n * n))
    return n, bits.to_blob(np.array(cells, dtype=np.uint8).reshape(n, n))


@settings(max_examples=200)
@given(b=blobs(), t=st.integers(0, 15), complement=st.booleans())
def test_transform_equals_numpy(b, t, complement):
    n, blob = b
    assert _sym.transform(n, blob, t, complement) == grid_image_py(n, blob, t, complement)
    assert grid_image(n, blob, t, complement) == grid_image_py(n, blob, t, complement)


@settings(max_examples=200)
@given(data=st.data(), n=st.sampled_from((6, 8, 10, 16)), seam=st.integers(0, 15), sparse=st.booleans())
def test_canonical_equals_numpy(data, n, seam, sparse):
    _, sol = data.draw(blobs(n))
    _, giv = data.draw(blobs(n))
    if sparse:  # few distinct keys: ties between transforms must go to the smallest t
        sol = bytes(len(sol))
        giv = bytes(len(giv))
    tile = Tile(n, sol, giv, seam)
    assert tile.canonical_transform() == canonical_transform_py(tile)
    # the rows the generator rates: the canonical Tile's own grids, as row ints
    canon, t = Tile(n, sol, giv, seam).canonical()
    rows = (t, bits.blob_rows(canon.solution, n), bits.blob_rows(canon.givens, n))
    assert _sym.canonical_rows(n, sol, giv, seam_images(seam)) == rows == canonical_rows(n, sol, giv, seam)


def test_symmetric_tile_ties_go_to_the_smallest_t():
    n = 6
    tile = Tile(n, bytes(bits.blob_len(n)), bytes(bits.blob_len(n)), 0)
    assert tile.canonical_transform() == 0 == canonical_transform_py(tile)


def test_bad_blobs_are_rejected():
    import pytest

    with pytest.raises(ValueError):
        _sym.transform(6, b"\x00" * 4, 1, True)
    with pytest.raises(ValueError):
        _sym.transform(7, b"\x00" * 7, 1, True)
    with pytest.raises(ValueError):
        _sym.transform(6, b"\x00" * 5, 16, True)
    with pytest.raises(TypeError):
        _sym.canonical(6, "x" * 5, b"\x00" * 5, [0] * 16)
    with pytest.raises(ValueError):
        _sym.canonical(6, b"\x00" * 5, b"\x00" * 5, [0] * 15)
    with pytest.raises(ValueError):
        _sym.canonical_rows(6, b"\x00" * 5, b"\x00" * 4, [0] * 16)
    with pytest.raises(ValueError):
        _sym.canonical_rows(5, b"\x00" * 4, b"\x00" * 4, [0] * 16)
