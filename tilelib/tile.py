"""The immutable tile value (FORMAT §3–4): grids as BLOBs, features, transforms, canonical form, hash.

A ``Tile`` holds its solution and givens as BLOBs (FORMAT §2) so it is hashable
and cheap to store; grids are decoded on demand. ``transform`` carries every
field through one of the 16 symmetries exactly as FORMAT §3 says: grids take
all three steps, masks only the geometric ones, side nibbles permute with the
sides, and alternatives are re-sorted with their alt_sides nibbles.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from tilelib import bits
from tilelib.native import load_twin
from tilelib.symmetry import TRANSFORMS, apply_grid, apply_mask, transform_side_mask

if TYPE_CHECKING:
    import numpy as np

_sym = load_twin("tilelib._sym")  # the C twin of the transforms below; numpy is the reference


@dataclass(frozen=True)
class Features:
    """What the generator measured about a tile (FORMAT §4). Defaults describe an m = 1 tile."""

    version: int = 0
    m: int = 1
    blank: float = 0.0
    ladder: int = 0
    bifurcations: int = 0
    used_unique: int = 0
    needs_unique: int = 0
    needs_bifurcation: int = 0
    pins: int = 0
    pin_depth: int = 0
    alt_sides: int = 0
    flip: bytes = b""  # empty means "the all-zero grid" (filled in by Tile)
    alts: bytes = b""  # (m-1) grid BLOBs, ascending


def nibbles(packed: int, count: int) -> list[int]:
    """Unpack ``count`` 4-bit nibbles, first in the lowest nibble."""
    return [(packed >> (4 * i)) & 15 for i in range(count)]


def pack_nibbles(values: list[int]) -> int:
    """Pack 4-bit values, first in the lowest nibble."""
    out = 0
    for i, v in enumerate(values):
        out |= (v & 15) << (4 * i)
    return out


def features_image(n: int, f: Features, t: int) -> Features:
    """A side-n tile's features under transform t (FORMAT §3): the pins and the alternatives' side
    nibbles permute with the sides, the flip mask takes the geometric steps, the alternatives all
    three and are sorted again (with their nibbles); the counts and ratings stay."""
    if t == 0 or (not f.alts and not f.pins and not any(f.flip)):  # the latter: an m = 1 tile's features
        return f
    alts, alt_sides = f.alts, f.alt_sides
    if alts:  # an m = 1 tile (most) has none: nothing to re-sort
        bl = bits.blob_len(n)
        images = [grid_image(n, alts[i : i + bl], t, True) for i in range(0, len(alts), bl)]
        sides = [transform_side_mask(s, t) for s in nibbles(alt_sides, len(images))]
        order = sorted(range(len(images)), key=lambda i: images[i])
        alts, alt_sides = b"".join(images[i] for i in order), pack_nibbles([sides[i] for i in order])
    # every field named (``dataclasses.replace`` walks the fields: half the cost of a transform)
    return Features(
        version=f.version,
        m=f.m,
        blank=f.blank,
        ladder=f.ladder,
        bifurcations=f.bifurcations,
        used_unique=f.used_unique,
        needs_unique=f.needs_unique,
        needs_bifurcation=f.needs_bifurcation,
        pins=transform_side_mask(f.pins, t),
        pin_depth=f.pin_depth,
        alt_sides=alt_sides,
        flip=grid_image(n, f.flip, t, False),
        alts=alts,
    )


@dataclass(frozen=True)
class Tile:
    """An n×n tile: solution and givens BLOBs, seam_mask, features."""

    n: int
    solution: bytes
    givens: bytes
    seam_mask: int = 0
    features: Features = field(default_factory=Features)

    def __post_init__(self) -> None:
        bl = bits.blob_len(self.n)
        if len(self.solution) != bl or len(self.givens) != bl:
            raise ValueError(f"solution/givens blobs must be {bl} bytes for n={self.n}")
        if not self.features.flip:
            object.__setattr__(self, "features", replace(self.features, flip=bytes(bl)))

    # ------------------------------------------------------------ construction

    @staticmethod
    def from_grids(
        solution: np.ndarray, givens: np.ndarray, seam_mask: int = 0, features: Features | None = None
    ) -> Tile:
        import numpy as np

        sol = np.asarray(solution, dtype=np.uint8)
        return Tile(sol.shape[0], bits.to_blob(sol), bits.to_blob(givens), seam_mask, features or Features())

    # ------------------------------------------------------------ views

    @cached_property
    def solution_grid(self) -> np.ndarray:
        return bits.from_blob(self.solution, self.n)

    @cached_property
    def givens_grid(self) -> np.ndarray:
        return bits.from_blob(self.givens, self.n)

    def alt_grids(self) -> list[np.ndarray]:
        """The m-1 alternative solutions as grids, in stored (ascending) order."""
        bl = bits.blob_len(self.n)
        a = self.features.alts
        return [bits.from_blob(a[i : i + bl], self.n) for i in range(0, len(a), bl)]

    @cached_property
    def edges(self) -> tuple[int, int, int, int]:
        """(top, right, bottom, left) edge ints of the solution (from its row ints: no numpy)."""
        return bits.row_edges(bits.blob_rows(self.solution, self.n), self.n)

    def puzzle(self, extra_sides: int = 0) -> bits.Puzzle:
        """The givens as a puzzle, plus the full cells of the sides in ``extra_sides`` (a side mask)."""
        import numpy as np

        known = np.array(self.givens_grid, dtype=np.uint8)
        if extra_sides & bits.TOP:
            known[0, :] = 1
        if extra_sides & bits.RIGHT:
            known[:, -1] = 1
        if extra_sides & bits.BOTTOM:
            known[-1, :] = 1
        if extra_sides & bits.LEFT:
            known[:, 0] = 1
        return bits.Puzzle.from_grid(self.solution_grid, known)

    # ------------------------------------------------------------ symmetry

    def transform(self, t: int) -> Tile:
        """This tile under transform t (FORMAT §3), every field carried along."""
        if t == 0:
            return self
        n = self.n
        return Tile(
            n,
            grid_image(n, self.solution, t, True),
            grid_image(n, self.givens, t, False),
            transform_side_mask(self.seam_mask, t),
            features_image(n, self.features, t),
        )

    def _key(self) -> bytes:
        return self.solution + self.givens + bytes([self.seam_mask])

    def canonical_transform(self) -> int:
        """The t whose image has the smallest key solution+givens+seam_mask (ties: smallest t);
        computed once per tile."""
        return self._canonical_t

    @cached_property
    def _canonical_t(self) -> int:
        if _sym is not None:
            return _sym.canonical(self.n, self.solution, self.givens, seam_images(self.seam_mask))
        return canonical_transform_py(self)

    @classmethod
    def canonical_image(
        cls, n: int, sol_rows: list[int], giv_rows: list[int], seam_mask: int, features: Features
    ) -> Tile:
        """The tile of a canonical image given by its row ints (what ``canonical_rows`` returns, the
        features already transformed): a canonical image is its own canonical form under t = 0 (the
        identity gives the smallest key among its images, and 0 is the smallest t), so its
        ``canonical()`` and ``edges`` are known without a search — the generator's tile, whose
        insert then neither searches the 16 again nor re-reads its BLOB."""
        out = cls(n, bits.rows_blob(sol_rows, n), bits.rows_blob(giv_rows, n), seam_mask, features)
        out.__dict__.update(_canonical_t=0, _canonical_pair=(out, 0), edges=bits.row_edges(sol_rows, n))
        return out

    def canonical(self) -> tuple[Tile, int]:
        """(canonical tile, t) with canonical = self.transform(t); computed once per tile."""
        return self._canonical_pair

    @cached_property
    def _canonical_pair(self) -> tuple[Tile, int]:
        t = self.canonical_transform()
        return self.transform(t), t

    def with_features(self, features: Features) -> Tile:
        """This tile with other features. The canonical transform depends on the solution, givens
        and seam_mask alone, so one already computed is carried over (the generator rates the
        canonical orientation of a bare tile, then stores the one with features)."""
        out = Tile(self.n, self.solution, self.givens, self.seam_mask, features)
        if "_canonical_t" in self.__dict__:
            out.__dict__["_canonical_t"] = self._canonical_t
        return out

    @cached_property
    def hash(self) -> str:
        """Content hash over the canonical orientation (FORMAT §3), lower-case hex."""
        c = self.canonical()[0]
        return content_hash(c.n, c.solution, c.givens, c.seam_mask)


def canonical_rows(n: int, solution: bytes, givens: bytes, seam_mask: int) -> tuple[int, list[int], list[int]]:
    """(t, solution rows, givens rows) of the canonical image of a tile given by its BLOBs, without
    building the canonical Tile (row ints as ``bits.blob_rows``): what the generator rates, before any
    ``Tile`` of it exists."""
    if _sym is not None:
        return _sym.canonical_rows(n, solution, givens, seam_images(seam_mask))
    t = canonical_transform_py(Tile(n, solution, givens, seam_mask))
    return t, bits.blob_rows(grid_image(n, solution, t, True), n), bits.blob_rows(grid_image(n, givens, t, False), n)


def content_hash(n: int, solution: bytes, givens: bytes, seam_mask: int) -> str:
    """sha256(bytes([n]) + solution + givens + bytes([seam_mask])) as lower-case hex."""
    return hashlib.sha256(bytes([n]) + solution + givens + bytes([seam_mask])).hexdigest()


def seam_images(seam_mask: int) -> tuple[int, ...]:
    """The side mask under each of the 16 transforms (the last byte of each canonical key)."""
    return _SEAM_IMAGES[seam_mask & 15]


_SEAM_IMAGES = tuple(tuple(transform_side_mask(m, t) for t in TRANSFORMS) for m in range(16))


def grid_image(n: int, blob: bytes, t: int, complement: bool) -> bytes:
    """A grid BLOB under transform t: geometry, then the values complemented when
    ``complement`` and t >= 8 (solutions and alternatives; masks pass False)."""
    if t == 0:
        return blob
    if _sym is not None:
        return _sym.transform(n, blob, t, complement)
    return grid_image_py(n, blob, t, complement)


def grid_image_py(n: int, blob: bytes, t: int, complement: bool) -> bytes:
    """``grid_image`` with numpy (the reference the C twin is tested against)."""
    g = bits.from_blob(blob, n)
    return bits.to_blob(apply_grid(g, t) if complement else apply_mask(g, t))


def canonical_transform_py(tile: Tile) -> int:
    """``Tile.canonical_transform`` with numpy (the reference the C twin is tested against)."""
    sol, giv = tile.solution_grid, tile.givens_grid
    best_t, best_key = 0, None
    for t in TRANSFORMS:
        key = (
            bits.to_blob(apply_grid(sol, t))
            + bits.to_blob(apply_mask(giv, t))
            + bytes([transform_side_mask(tile.seam_mask, t)])
        )
        if best_key is None or key < best_key:
            best_t, best_key = t, key
    return best_t
