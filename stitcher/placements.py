"""What the squares of one stitch are and hold: the one owner of that state.

``Placements`` keeps, per square id, parallel lists (a struct of arrays: the C forward check reads
the lists themselves, ``check.ForwardCheck``):

- **geometry**: ``squares`` (x, y, s) in pitch space, ``adj`` (the squares sharing a cell),
  ``dist`` (BFS distance from the seed tile), ``known`` (the side mask a square's tile is thinned
  against), ``own`` (the square or zone of every pitch unit), ``children`` (a split square's
  sub-squares) and ``new_zones`` (the zone rectangles splits left). Fixed after set-up but for
  ``split``, which appends a square's sub-squares.
- **holdings**: the tile (hash, t) on each square or None, its oriented edges and its turn (when
  it was last placed), the cells of the ``board`` those tiles make, and the fair rule's marks of
  the solutions on the board (``fresh.FreshRule``, for a fair stitch).

Its methods are the only way any of it changes (``put``, ``remove``, ``take_off`` / ``put_back``,
``split``) or is read by the steps of a stitch (``tile``, ``edges``, ``turn``, ``open_neighbours``,
``movable_neighbours``, ``leaves``...). It knows nothing of the library, the index or the drain:
``stitcher.run`` decides what goes where, this module keeps it.
"""

from __future__ import annotations

from packers.packing import Packing, adjacency
from stitcher.board import Board
from stitcher.check import ForwardCheck
from stitcher.fresh import FreshRule
from stitcher.order import ZONE, bfs_distance, known_sides, ring, side_known, unit_owner

Tile = tuple[str, int]  # (hash, t): a library tile in orientation t


class Placements:
    """The geometry of a packing's squares, the tile each holds, and the board they make."""

    def __init__(self, packing: Packing, fresh: FreshRule | None = None) -> None:
        self.seed = packing.seed_tile
        self.first = len(packing.squares)  # ids below this are the packing's own
        self.own = unit_owner(packing)
        self.adj: list[list[int]] = adjacency(packing.squares)
        self.dist: list[int] = bfs_distance(self.adj, packing.seed_tile)
        self.known: list[int] = known_sides(packing, self.own, self.dist)
        self.squares: list[tuple[int, int, int]] = list(packing.squares)
        self.children: dict[int, list[int]] = {}
        self.new_zones: list[tuple[int, int, int, int]] = []
        self._tiles: list[Tile | None] = [None] * len(self.squares)
        self._edges: dict[int, tuple] = {}
        self._turn: dict[int, int] = {}
        self._seq = 0
        self.count = 0  # squares holding a tile now
        self.board = Board(packing.G)
        self.fresh = fresh
        # the board is a CBoard exactly when ForwardCheck is the C one (both are the twin stitcher._core
        # chose); mypy cannot tie the two choices together
        self.fcheck = ForwardCheck(self.board, self.squares, self.adj, self._tiles, self.children)  # type: ignore[arg-type]

    # ------------------------------------------------------------ changes

    def put(self, i: int, h: str, t: int, edges, *, renumber: bool = True) -> None:
        """Tile (h, t) with oriented ``edges`` on square i: its cells on the board, its turn (now,
        unless ``renumber`` is off: a repair putting a square back keeps its old turn), the fair
        rule's mark of its solution."""
        x, y, s = self.squares[i]
        self.board.place(x, y, s + 1, edges)
        self._tiles[i], self._edges[i] = (h, t), edges
        if renumber:
            self._seq += 1
            self._turn[i] = self._seq
        self.count += 1
        if self.fresh is not None:
            self.fresh.put(s + 1, h)

    def remove(self, i: int) -> None:
        """Take square i's tile off (``put``'s inverse; its turn is kept for ``put_back``)."""
        x, y, s = self.squares[i]
        self.board.remove(x, y, s + 1)
        tile = self._tiles[i]
        assert tile is not None, f"square {i} holds no tile"  # only placed squares are taken off
        h = tile[0]
        self._tiles[i] = None
        del self._edges[i]
        self.count -= 1
        if self.fresh is not None:
            self.fresh.take(s + 1, h)

    def take_off(self, ks: list[int]) -> dict:
        """Remove squares ks; returns what ``put_back`` needs to restore them as they were."""
        old = {k: (self._tiles[k], self._edges[k]) for k in ks}
        for k in ks:
            self.remove(k)
        return old

    def put_back(self, old: dict) -> None:
        """Re-place the squares ``take_off`` removed, with their tiles and turns."""
        for k, ((h, t), e) in old.items():
            self.put(k, h, t, e, renumber=False)

    def split(self, i: int, subs: list[tuple[int, int, int]], zones: list[tuple[int, int, int, int]]) -> list[int]:
        """Replace unplaced square i by the sub-squares ``subs`` and the zone rectangles ``zones``
        that cover it: the zones are marked, each sub-square appended with its known sides and
        adjacency (its neighbours' forward-check geometry forgotten). Returns the new ids."""
        for zx, zy, zw, zh in zones:
            self.own[zy : zy + zh, zx : zx + zw] = ZONE
        self.new_zones.extend(zones)
        ids = []
        for sq in subs:
            j = len(self.squares)
            self.squares.append(sq)
            self._tiles.append(None)
            self.dist.append(self.dist[i])
            self.adj.append([])
            self.known.append(0)
            self.own[sq[1] : sq[1] + sq[2], sq[0] : sq[0] + sq[2]] = j
            ids.append(j)
        for j in ids:
            self.known[j] = side_known(self.own, self.dist, self.squares[j], self.dist[j])
            xj, yj, sj = self.squares[j]
            nb = sorted({int(k) for strip in ring(self.own, xj, yj, sj) for k in strip.tolist() if k >= 0 and k != j})
            self.adj[j] = nb
            for k in nb:
                if j not in self.adj[k]:
                    self.adj[k].append(j)
                self.fcheck.forget(k)
        self.children[i] = ids
        return ids

    # ------------------------------------------------------------ queries

    def tile(self, i: int) -> Tile | None:
        """(hash, t) on square i, or None."""
        return self._tiles[i]

    def placed(self, i: int) -> bool:
        return self._tiles[i] is not None

    def edges(self, i: int) -> tuple:
        """The oriented edges of the tile on square i (placed squares only)."""
        return self._edges[i]

    def turn(self, i: int) -> int:
        """When square i was last placed (0: never)."""
        return self._turn.get(i, 0)

    def n(self, i: int) -> int:
        """Square i's tile side."""
        return self.squares[i][2] + 1

    def open_neighbours(self, i: int) -> list[int]:
        """The neighbours of square i that hold no tile and were not split (in ``adj`` order): the
        windows a tile for i must leave completable."""
        return [j for j in self.adj[i] if self._tiles[j] is None and j not in self.children]

    def open_around(self, group: list[int]) -> list[int]:
        """``open_neighbours`` of the squares of ``group`` together, outside it, in id order."""
        inside = set(group)
        return sorted({j for g in group for j in self.open_neighbours(g) if j not in inside})

    def movable_neighbours(self, i: int, fixed: frozenset) -> list[int]:
        """The placed neighbours of square i a repair may take off (not in ``fixed``), most recent first."""
        near = [k for k in self.adj[i] if self._tiles[k] is not None and k not in fixed]
        near.sort(key=lambda k: -self.turn(k))
        return near

    def held(self, ids) -> list[tuple[int, str, int, tuple]]:
        """(i, hash, t, edges) of the squares of ``ids`` that hold a tile, in the order they were placed."""
        placed = sorted((k for k in ids if self._tiles[k] is not None), key=self._turn.__getitem__)
        return [(k, *self._tiles[k], self._edges[k]) for k in placed]

    def leaves(self) -> tuple[list[tuple[int, int, int]], list[Tile | None], int | None]:
        """(squares, tiles, seed id) of the final packing: the packing's squares in id order, each
        split one replaced, in place, by its leaves (recursively). The seed is never split
        (``run.split`` refuses), so its id is None only when ``seed_tile`` names no square."""
        squares: list[tuple[int, int, int]] = []
        tiles: list[Tile | None] = []
        seed_id: int | None = None

        def emit(i: int) -> None:
            nonlocal seed_id
            if i in self.children:
                for j in self.children[i]:
                    emit(j)
                return
            if i == self.seed:
                seed_id = len(squares)
            squares.append(self.squares[i])
            tiles.append(self._tiles[i])

        for i in range(self.first):
            emit(i)
        return squares, tiles, seed_id
