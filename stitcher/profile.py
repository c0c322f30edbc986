"""The stitcher's side of difficulty profiles (``tilelib.difficulty``): candidate indexes per level set.

A level index holds the tiles of the stitch's main index (the bounded active set, as opened:
``stitcher.active``) whose ladder level is in a set — never more than the main index, so a
profiled build costs the same at any library size. Reading the level of every active tile is
one primary-key lookup per tile (~200k at the cap), shared by every level set.
"""

from __future__ import annotations

import numpy as np

_CHUNK = 500


def ladders(conn, hashes: list[str]) -> dict[str, int]:
    """hash -> ladder level of the given library tiles."""
    out: dict[str, int] = {}
    for k in range(0, len(hashes), _CHUNK):
        part = hashes[k:k + _CHUNK]
        out.update(conn.execute(f"SELECT hash, ladder FROM tiles WHERE hash IN ({','.join('?' * len(part))})",
                                part).fetchall())
    return out


def level_indexes(conn, base, ns, sets) -> dict:
    """{level set: MemoryIndex} over the tiles of ``base`` (a ``MemoryIndex`` just opened) whose
    ladder is in the set: per n the same entries, in the same (hash) order, with the same C table
    as ``MemoryIndex.load`` over that subset."""
    from stitcher.index import MemoryIndex

    ns = sorted(set(ns))
    active = {n: base.tile_hashes(n) for n in ns}
    level = ladders(conn, [h for n in ns for h in active[n]])
    out = {}
    for levels in sets:
        idx = MemoryIndex()
        for n in ns:
            keep = np.array([j for j, h in enumerate(active[n]) if level.get(h) in levels], dtype=np.int64)
            edges, m, pins = base.canonical_rows(n, keep)
            idx.add_arrays(n, [active[n][j] for j in keep.tolist()], edges, m, pins)
        out[levels] = idx
    return out
