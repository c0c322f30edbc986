"""The stitcher's side of difficulty profiles (``tilelib.difficulty``): candidate pools per level set.

A level set's pool is a ``index.LevelView`` of the stitch's main index (the bounded active set, as
opened: ``stitcher.active``): the main index's own entries and C table, each lookup keeping only
the tiles whose ladder level is in the set — no copy, so a profiled build holds the same index as
one without a profile, at any library size. The levels come with the active set (the sidecar keeps
each tile's ladder level); an index built otherwise (``MemoryIndex.add`` knows no level) has them
read from the library by primary key here, once.
"""

from __future__ import annotations

import numpy as np

from tilelib.db import rows_by_hash


def ladders(conn, hashes: list[str]) -> dict[str, int]:
    """hash -> ladder level of the given library tiles."""
    return dict(rows_by_hash(conn, ("hash", "ladder"), hashes))


def fill_levels(conn, base, ns) -> None:
    """Give the tiles of ``base`` (a ``MemoryIndex``) whose level it does not know (0) their
    library ladder level."""
    from stitcher.index import build_tables

    for n in ns:
        rows = np.flatnonzero(base.levels(n) == 0)
        if len(rows):
            hashes = base.tile_hashes(n)
            level = ladders(conn, [hashes[r] for r in rows.tolist()])
            base.sizes[n].set_levels(rows, [level.get(hashes[r], 0) for r in rows.tolist()])
    build_tables(base.sizes.values())


def level_indexes(conn, base, ns, sets) -> dict:
    """{level set: LevelView} of ``base`` (a ``MemoryIndex`` just opened) over the sizes ``ns``."""
    from stitcher.index import LevelView

    fill_levels(conn, base, sorted(set(ns)))
    return {levels: LevelView(base, levels) for levels in sets}
