"""Stitch statistics (issue 6 item 6): counters per tile side n, fills and where the time went.

Counters per n: ``squares`` attempted (fallback sub-squares included),
``hits_first`` / ``misses_first`` (lookup at the square's first turn; tiles
drained earlier in the same stitch count as library tiles), ``hits_retry``,
``drained`` (a tile made for a recorded miss), ``joint`` (every tile made
window-aware — for misses, for hits that failed the forward check, and in
repairs — so it overlaps ``drained``; new library tiles = the library's growth),
``nofit`` (CP-SAT proof), ``settled`` (nofit by containment, no solving),
``failed`` (completions could not be thinned), ``repaired`` (of which ``repaired_together``:
by one model for the square and the neighbours taken off), ``fallbacks``
(squares split or zoned), ``preferred`` (placements pinned by the known
sides), ``unchecked`` (placed although no candidate passed the forward check), ``reused`` (a
made tile's grid was already an indexed tile that could stand for it: that tile was placed and
no row added, ``stitcher.reuse``), ``repaired_early`` (of ``repaired``: at the square's own turn,
because no candidate passed the forward check and no window-aware tile could be made); under the
fair rule (``stitcher.fresh``) ``banned`` (a made grid whose solution was on the board, the other
half's or spent: another was asked for) and ``clashed`` (a half's placement whose solution the
other half had placed too: the square was left to the last pass); ``isolated`` (a square no seam
path joined to the seed tile once the splits were done: made zone, ``stitcher.fallback.assemble``);
``repaired_wide`` (of ``repaired_together``: with the second ring off too, ``repair.second_ring``);
``decided_c`` and ``decided_cpsat`` (completions, by the side of their first window, decided by the
C search or, past its node budget, by CP-SAT: ``engine.completion``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

COUNTERS = (
    "squares",
    "hits_first",
    "misses_first",
    "hits_retry",
    "drained",
    "nofit",
    "settled",
    "failed",
    "fallbacks",
    "preferred",
    "unchecked",
    "joint",
    "repaired",
    "repaired_together",
    "profile_hits",
    "reused",
    "repaired_early",
    "banned",
    "clashed",
    "isolated",
    "repaired_wide",
    "decided_c",
    "decided_cpsat",
)


@dataclass
class StitchStats:
    """Counters per n (see COUNTERS), fills, and where the time went."""

    per_n: dict = field(default_factory=dict)
    placements: int = 0
    square_area: int = 0  # pitch area of the input packing's squares
    first_fill: float = 0.0  # area placed in the first pass / square_area
    final_fill: float = 0.0  # area holding library tiles at the end / square_area
    zone_fraction_before: float = 0.0
    zone_fraction_after: float = 0.0
    seconds: dict = field(default_factory=dict)
    cp_calls: int = 0
    made: int = 0  # tiles the drain made and placed at the time (kept back until the end)
    dropped: int = 0  # of those, not written: neither on the final board nor named by the ledger
    index: dict = field(default_factory=dict)  # how the index was had (MemoryIndex.open's info)

    def bump(self, n: int, key: int | str, by: int = 1) -> None:
        d = self.per_n.setdefault(n, dict.fromkeys(COUNTERS, 0))
        d[key] += by

    def merge(self, other: StitchStats) -> None:
        """Add another run's counters, placements, tiles made, CP-SAT calls and seconds (a half's)."""
        for n, d in other.per_n.items():
            for key, v in d.items():
                self.bump(n, key, v)
        self.placements += other.placements
        self.cp_calls += other.cp_calls
        self.made += other.made
        for key, v in other.seconds.items():
            self.seconds[key] = self.seconds.get(key, 0.0) + v

    def total(self, key: str) -> int:
        return sum(d[key] for d in self.per_n.values())

    def as_dict(self) -> dict:
        return {
            "per_n": {str(n): dict(d) for n, d in sorted(self.per_n.items())},
            "placements": self.placements,
            "square_area": self.square_area,
            "first_fill": self.first_fill,
            "final_fill": self.final_fill,
            "zone_fraction_before": self.zone_fraction_before,
            "zone_fraction_after": self.zone_fraction_after,
            "cp_calls": self.cp_calls,
            "made": self.made,
            "dropped": self.dropped,
            "seconds": dict(self.seconds),
            "index": dict(self.index),
        }
