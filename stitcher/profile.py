"""The stitcher's side of difficulty profiles (``tilelib.difficulty``): candidate indexes per level set.

A level index holds the tiles of the stitch's main index (the bounded active set, as opened:
``stitcher.active``) whose ladder level is in a set — never more than the main index, so a
profiled build costs the same at any library size. The levels come with the active set (the
sidecar keeps each tile's ladder level), so no library read is needed; an index built otherwise
reads them by primary key.
"""

from __future__ import annotations

import numpy as np

from tilelib.db import rows_by_hash


def ladders(conn, hashes: list[str]) -> dict[str, int]:
    """hash -> ladder level of the given library tiles."""
    return dict(rows_by_hash(conn, ("hash", "ladder"), hashes))


def _levels(conn, base, n: int, hashes: list[str]) -> np.ndarray:
    """The ladder level of each of ``hashes`` (size n of ``base``, in order): from the levels the
    index was opened with (the sidecar keeps them), else read from the library."""
    got = base.opened_ladders.get(n)
    if got is not None and len(got) == len(hashes):
        return np.asarray(got, dtype=np.int64)
    level = ladders(conn, hashes)
    return np.array([level.get(h, -1) for h in hashes], dtype=np.int64)


def level_indexes(conn, base, ns, sets) -> dict:
    """{level set: MemoryIndex} over the tiles of ``base`` (a ``MemoryIndex`` just opened) whose
    ladder is in the set: per n the same entries, in the same (hash) order, with the same C table
    as ``MemoryIndex.load`` over that subset."""
    from stitcher.index import MemoryIndex, build_tables

    ns = sorted(set(ns))
    lv = {n: _levels(conn, base, n, base.tile_hashes(n)) for n in ns}
    out = {}
    for levels in sets:
        idx = MemoryIndex()
        want = np.array(sorted(levels), dtype=np.int64)
        for n in ns:
            idx.add_subset(n, base, np.flatnonzero(np.isin(lv[n], want)))
        out[levels] = idx
    build_tables([si for idx in out.values() for si in idx.sizes.values()])
    return out
