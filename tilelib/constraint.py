"""Edge constraints on a square: which cells of each side are fixed, and to what (FORMAT §5, §8).

A ``Constraint`` is four (mask, value) pairs in absolute directions (top,
right, bottom, left; FORMAT §2 bit order): bit i of ``masks[s]`` says the cell
at that bit of side s is fixed, and ``values[s]`` holds those cells (0 off the
mask). A whole side has mask ``2**n - 1``; a partly known side (a big tile
facing several small neighbours, or a side touching the board's free edge)
has some bits; an unconstrained side has mask 0.

``pull_back(c, t)`` answers "which constraint must a canonical tile satisfy so
that its image under t satisfies c" — the heart of the 16-way query
expansion. ``canonical_constraint`` gives one representative of the 16
images, so identical misses in different orientations are one row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tilelib import bits
from tilelib.symmetry import EDGE_MAP, TRANSFORMS, inverse

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass(frozen=True)
class Constraint:
    n: int
    masks: tuple[int, int, int, int]
    values: tuple[int, int, int, int]

    def __post_init__(self) -> None:
        full = (1 << self.n) - 1
        for m, v in zip(self.masks, self.values, strict=True):
            if m & ~full or v & ~m:
                raise ValueError("constraint values must lie inside their n-bit masks")

    @staticmethod
    def sides(
        n: int, top: int | None = None, right: int | None = None, bottom: int | None = None, left: int | None = None
    ) -> Constraint:
        """Whole sides given as ints (None = unconstrained)."""
        full = (1 << n) - 1
        vals = (top, right, bottom, left)
        m0, m1, m2, m3 = (0 if v is None else full for v in vals)
        v0, v1, v2, v3 = (0 if v is None else v for v in vals)
        return Constraint(n, (m0, m1, m2, m3), (v0, v1, v2, v3))

    @property
    def side_mask(self) -> int:
        """Side bits (top 1, right 2, bottom 4, left 8) of sides with any fixed cell."""
        return sum(1 << s for s in range(4) if self.masks[s])

    @property
    def full_mask(self) -> int:
        """Side bits of sides that are wholly fixed."""
        full = (1 << self.n) - 1
        return sum(1 << s for s in range(4) if self.masks[s] == full)

    def key(self) -> tuple[int, ...]:
        return (self.n, *self.masks, *self.values)

    def matches(self, edges: tuple[int, int, int, int]) -> bool:
        """True if a tile with these (oriented) edges satisfies the constraint."""
        return all((e & m) == v for e, m, v in zip(edges, self.masks, self.values, strict=True))

    def contains(self, other: Constraint) -> bool:
        """True if every cell ``other`` fixes is fixed here to the same value (self is at least as hard)."""
        return self.n == other.n and all(
            (m & om) == om and (v & om) == ov
            for m, v, om, ov in zip(self.masks, self.values, other.masks, other.values, strict=True)
        )


def pull_back(c: Constraint, t: int) -> Constraint:
    """The constraint on a tile X such that X.transform(t) satisfies c."""
    n, full = c.n, (1 << c.n) - 1
    masks, values = [0] * 4, [0] * 4
    for new_side, src in enumerate(EDGE_MAP[t]):
        m, v = c.masks[new_side], c.values[new_side]
        if src.complemented:
            v = (v ^ full) & m
        if src.reversed:
            m, v = bits.reverse_bits(m, n), bits.reverse_bits(v, n)
        masks[src.side], values[src.side] = m, v
    return Constraint(n, (masks[0], masks[1], masks[2], masks[3]), (values[0], values[1], values[2], values[3]))


def push_forward(c: Constraint, t: int) -> Constraint:
    """The constraint that X.transform(t) satisfies whenever X satisfies c."""
    return pull_back(c, inverse(t))


_REVERSED: dict[int, np.ndarray] = {}  # n -> every n-bit int reversed, indexed by the int


def _reversed_table(n: int) -> np.ndarray:
    """``bits.reverse_bits(v, n)`` for every v < 2**n, as one array (n <= 16: at most 65,536 entries)."""
    if n not in _REVERSED:
        v = np.arange(1 << n, dtype=np.int64)
        r = np.zeros_like(v)
        for i in range(n):
            r |= ((v >> i) & 1) << (n - 1 - i)
        _REVERSED[n] = r
    return _REVERSED[n]


def image_arrays(n: int, masks: ArrayLike, values: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``push_forward(c, t)`` for every constraint row of side n and every t in ``TRANSFORMS``, at once:
    from (k, 4) mask and value rows (a constraint's sides, top right bottom left), the (16·k, 4) rows
    of the images, constraint by constraint, t by t (row 16·i + t is constraint i's image under t).
    Raises ValueError as ``Constraint`` does when a value lies outside its n-bit mask."""
    m_in = np.asarray(masks, dtype=np.int64).reshape(-1, 4)
    v_in = np.asarray(values, dtype=np.int64).reshape(-1, 4)
    full = (1 << n) - 1
    if ((m_in & ~full) | (v_in & ~m_in)).any():
        raise ValueError("constraint values must lie inside their n-bit masks")
    rev = _reversed_table(n)
    out_m = np.empty((m_in.shape[0], 16, 4), dtype=np.int64)
    out_v = np.empty_like(out_m)
    for t in TRANSFORMS:
        for new_side, src in enumerate(EDGE_MAP[inverse(t)]):  # push_forward is pull_back by the inverse
            m, v = m_in[:, new_side], v_in[:, new_side]
            if src.complemented:
                v = (v ^ full) & m
            if src.reversed:
                m, v = rev[m], rev[v]
            out_m[:, t, src.side], out_v[:, t, src.side] = m, v
    return out_m.reshape(-1, 4), out_v.reshape(-1, 4)


def canonical_constraint(c: Constraint) -> tuple[Constraint, int]:
    """(representative, t) with representative = push_forward(c, t), smallest key (ties: smallest t)."""
    best = min((push_forward(c, t).key(), t) for t in TRANSFORMS)
    return push_forward(c, best[1]), best[1]


def window_constraint(values: np.ndarray, known: np.ndarray, x0: int, y0: int, n: int) -> Constraint:
    """Constraint a square at board cell (y0, x0) of side n faces from a board's known cells.

    ``values``/``known`` are board-sized uint8 arrays; this answers the library's
    fourth question (FORMAT §5): given placed tiles, the next placement's constraints.
    """
    win_v = values[y0 : y0 + n, x0 : x0 + n]
    win_k = known[y0 : y0 + n, x0 : x0 + n]
    lines_v = (win_v[0, :], win_v[:, -1], win_v[-1, :], win_v[:, 0])
    lines_k = (win_k[0, :], win_k[:, -1], win_k[-1, :], win_k[:, 0])
    m0, m1, m2, m3 = (bits.line_int(k) for k in lines_k)
    v0, v1, v2, v3 = (bits.line_int(v & k) for v, k in zip(lines_v, lines_k, strict=True))
    return Constraint(n, (m0, m1, m2, m3), (v0, v1, v2, v3))
