"""How a stitch runs: the drain mode and the options (``stitcher.stitch.StitchRun`` takes them)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from stitcher.drain import MAX_TRIES

if TYPE_CHECKING:
    from tilelib.difficulty import Profile


class Drain(Enum):
    """When a missed square is drained: at once (``INLINE``, the default), after the first pass
    (``DEFERRED``: measured, more nofits, since later neighbours add constraints), or never (``OFF``:
    lookups only)."""

    INLINE = "inline"
    DEFERRED = "deferred"
    OFF = "off"

    @classmethod
    def of(cls, value: Drain | bool) -> Drain:
        """A Drain from itself or a bool (True: INLINE, False: OFF); anything else is a ValueError."""
        if isinstance(value, Drain):
            return value
        if value is True or value is False:
            return cls.INLINE if value else cls.OFF
        raise ValueError(f"drain must be a Drain or a bool, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class StitchOptions:
    """How a stitch runs (see the module doc). Only ``workers`` may differ between two runs that
    must give the same board: it says how many processes stitch the halves of a big board."""

    drain: Drain = Drain.INLINE
    m_max: int | None = None  # m limit of drained tiles (None: the generator's default per n)
    max_tries: int = MAX_TRIES  # completions per plain drain
    order: str = "packer"  # placement order (stitcher.order.ORDERS)
    lookahead: bool = True  # forward check + window-aware drain and repair
    profile: Profile | None = None  # the ladder-level shares the draws aim for, or None
    reuse: bool = True  # a made tile whose grid the index holds is not added (stitcher.reuse)
    early_repair: bool = True  # repair a square at its turn rather than place it unchecked
    fresh: bool = False  # the fair rule: no n >= 10 solution twice, none spent (stitcher.fresh)
    workers: int = 1  # processes for the halves (stitcher.regions); not in the board

    def __post_init__(self) -> None:
        object.__setattr__(self, "drain", Drain.of(self.drain))
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
