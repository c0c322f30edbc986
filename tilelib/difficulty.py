"""Difficulty profiles: the share of ladder levels a daily board aims for, per tile side (issue 14).

A profile maps each n (6..16) to shares of ladder levels 1..5 (FORMAT §4's
``ladder``; 5 = L1–L4 cannot finish). With a profile, each square draws a
target level from its n's shares (stream ``stitch/profile``, child = the
square id, so the draw does not depend on the placement order and the main
placement stream is untouched), and the stitcher

1. looks up candidates among library tiles of that level, then among tiles
   of any level the profile allows (share > 0), and only then among all
   tiles, as it does without a profile ("where the library allows");
2. makes drained tiles at that level (``generator.make`` target-level
   thinning, Unruly's rule); a completion that cannot be thinned to the
   level is thinned to the next lower level, down to 2, and only then the
   usual way (``stitcher.drain._thin``).

The candidate filter is a view of the main index per level set
(``stitcher.profile.level_indexes``: a level mask over its tiles' ``ladder`` column, no copy), so
the draw itself is the index's own (C) ``choose``: the same code with or
without a profile. No profile (None) means exactly the stitcher's behaviour
without one. This module is plain data (the manifest parser checks the
``difficulty`` key with it); the stitcher part lives in ``stitcher.profile``.

JSON form (the manifest's ``difficulty`` key and ``--profile``): either one
share table for every n, ``{"2": 0.3, "3": 0.4, "4": 0.3}``, or one per n,
``{"6": {...}, ..., "16": {...}}``; or a preset name (``PRESETS``); or
"library" (no profile: the stitcher draws among all tiles, as before profiles).
Shares are normalised to sum 1 and written rounded to 6 decimals.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from tilelib.bits import VALID_N
from tilelib.errors import BadInput
from tilelib.rng import Stream

LEVELS = (1, 2, 3, 4, 5)

# "human": no level 5 (needs nested guessing) and a quarter at most of level 4 (one-cell
# trials); see docs/DECISIONS.md (issue 14) for why.
PRESETS = {
    "human": {"2": 0.25, "3": 0.5, "4": 0.25},
}

# What `tiles daily build` aims for when not told (its --profile default; "library" builds
# without a profile). The Python API (``daily.build.BuildOptions``) keeps None: callers say.
DEFAULT_PROFILE = "human"


@dataclass(frozen=True)
class Profile:
    """Normalised shares: ``shares[n][level-1]`` for n in 6..16 and levels 1..5."""

    shares: tuple[tuple[int, tuple[float, ...]], ...]

    def of(self, n: int) -> tuple[float, ...]:
        for k, v in self.shares:
            if k == n:
                return v
        raise BadInput(f"difficulty profile has no shares for n={n}")

    def allowed(self, n: int) -> frozenset[int]:
        """Levels with a positive share for side n."""
        return frozenset(lv for lv, s in zip(LEVELS, self.of(n), strict=True) if s > 0)

    def draw(self, n: int, stream: Stream) -> int:
        """A level for one square of side n, drawn with the profile's shares (32-bit resolution)."""
        u = int.from_bytes(stream.bytes(4), "big") / 2**32
        acc = 0.0
        levels = [lv for lv, s in zip(LEVELS, self.of(n), strict=True) if s > 0]
        for lv in levels:
            acc += self.of(n)[lv - 1]
            if u < acc:
                return lv
        return levels[-1]

    def to_json(self) -> dict:
        """The manifest form: {"6": {"2": 0.25, ...}, ...}, zero shares left out."""
        return {
            str(n): {str(lv): round(s, 6) for lv, s in zip(LEVELS, v, strict=True) if s > 0} for n, v in self.shares
        }


def _table(obj, what: str) -> tuple[float, ...]:
    if not isinstance(obj, dict) or not obj:
        raise BadInput(f"{what} must be a non-empty object of level: share")
    out = [0.0] * len(LEVELS)
    for k, v in obj.items():
        if str(k) not in {str(lv) for lv in LEVELS}:
            raise BadInput(f"{what}: level {k!r} is not one of 1..5")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise BadInput(f"{what}: share of level {k} must be a finite number >= 0, got {v!r}")
        out[int(k) - 1] = float(v)
    total = sum(out)
    if total <= 0:
        raise BadInput(f"{what}: shares sum to 0")
    return tuple(x / total for x in out)


def parse_profile(obj) -> Profile | None:
    """A ``Profile`` from its JSON form, JSON text or a preset name; None for None / "library"."""
    if obj is None or obj == "library":
        return None
    if isinstance(obj, str):
        if obj in PRESETS:
            obj = PRESETS[obj]
        else:
            try:
                obj = json.loads(obj)
            except json.JSONDecodeError as err:
                raise BadInput(
                    f"--profile must be a preset ({', '.join(PRESETS)}, library) or a JSON object, got {obj!r}"
                ) from err
    if not isinstance(obj, dict) or not obj:
        raise BadInput("difficulty profile must be a non-empty JSON object")
    if all(str(k) in {str(n) for n in VALID_N} for k in obj):
        missing = [n for n in VALID_N if str(n) not in {str(k) for k in obj}]
        if missing:
            raise BadInput(f"difficulty profile per n lacks n={missing[0]}")
        per = {int(k): _table(v, f"difficulty profile n={k}") for k, v in obj.items()}
    else:
        one = _table(obj, "difficulty profile")
        per = {n: one for n in VALID_N}
    return Profile(tuple(sorted(per.items())))
