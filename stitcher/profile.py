"""The stitcher's side of difficulty profiles (``tilelib.difficulty``): candidate indexes per level set."""

from __future__ import annotations


def level_index(conn, ns, levels: frozenset[int]):
    """A ``MemoryIndex`` over the library's tiles whose ladder is in ``levels`` (same entries,
    same order, same C table as ``MemoryIndex.load`` over that subset)."""
    from stitcher.index import MemoryIndex

    idx = MemoryIndex()
    marks = ",".join("?" * len(levels))
    for n in sorted(set(ns)):
        rows = [(h, (t, r, b, l), m, a) for h, t, r, b, l, m, a in conn.execute(
            f"SELECT hash, top, right, bottom, left, m, alt_sides FROM tiles WHERE n = ? AND ladder IN ({marks}) "
            "ORDER BY hash", (n, *sorted(levels)))]
        idx.add_rows(n, rows)
    return idx
