"""The scale benchmark's synthetic libraries (scripts/scale_libs.py) hold honest rows.

Every row passes the library verifier's checks (``tile_problems``), and for the variants —
the rows not made by the generator — the engine confirms what the features claim: the
givens have exactly m solutions, the stored solution and alternatives; the ladder rates the
same puzzle as the seed's (so the copied ladder features are the variant's own).
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import scale_libs  # noqa: E402

from engine.count import count  # noqa: E402
from engine.ladder import rate  # noqa: E402
from generator.features import ladder_puzzle  # noqa: E402
from tilelib import bits  # noqa: E402
from tilelib.audit import tile_problems  # noqa: E402
from tilelib.store import Library, row_to_tile  # noqa: E402


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setattr(scale_libs, "REAL", 60)
    d = tmp_path_factory.mktemp("scale")
    scale_libs.build_library(d, 40, workers=1, log=lambda _m: None)
    scale_libs.build_library(d, 400, workers=2, log=lambda _m: None)
    yield d
    mp.undo()


def _hashes(path):
    return [r[0] for r in sqlite3.connect(path).execute("SELECT hash FROM tiles ORDER BY rowid")]


def test_libraries_are_nested_prefixes_of_one_sequence(cache):
    small, big = _hashes(cache / "lib-40.sqlite"), _hashes(cache / "lib-400.sqlite")
    assert len(small) == 40 and len(big) == 400 and len(set(big)) == 400
    assert big[:40] == small


def test_every_row_passes_the_verifier_and_variants_are_what_they_claim(cache):
    with Library.open(cache / "lib-400.sqlite") as lib:
        rows = list(lib.iter_rows())
    by_solution = {}
    for row in rows:
        tile = row_to_tile(row)
        assert tile_problems(tile) == []
        by_solution.setdefault((tile.n, tile.solution, tile.seam_mask), []).append(tile)
    variants = 0
    for group in by_solution.values():
        seed = min(group, key=lambda t: t.givens_grid.sum())
        for tile in group:
            if tile is seed:
                continue
            variants += 1
            f = tile.features
            got = count(bits.Puzzle.from_grid(tile.solution_grid, tile.givens_grid), k=f.m + 1)
            assert got.count == f.m
            sols = sorted(bits.to_blob(g) for g in got.solutions)
            assert sols == sorted(
                [tile.solution]
                + [f.alts[i : i + len(tile.solution)] for i in range(0, len(f.alts), len(tile.solution))]
            )
            # the ladder's puzzle is the seed's: givens + seam sides
            mine = ladder_puzzle(tile.solution_grid, tile.givens_grid, tile.seam_mask)
            theirs = ladder_puzzle(seed.solution_grid, seed.givens_grid, seed.seam_mask)
            assert (mine.known == theirs.known).all() and (mine.values == theirs.values).all()
            lad = rate(ladder_puzzle(tile.solution_grid, tile.givens_grid, tile.seam_mask))
            assert (f.ladder, f.bifurcations) == (int(lad.ladder), int(lad.bifurcations))
    assert variants >= 300
