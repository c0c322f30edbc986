"""The day's manifest (FORMAT §9): a value, its one JSON text, and a parser that rejects anything malformed.

A ``Manifest`` is the packing (geometry: board, packer, seed tile, squares,
zones — ``packers.packing.Packing``, the one geometry value) plus what the
stitcher chose for each square (``hashes[i]``, ``transforms[i]``), the extra
``clues`` ([row, col] board cells), the day, the seed commitment, the
verified ``status`` and free-form ``stats``.

``to_json()`` writes ONE text for a value: top-level keys in the order of
FORMAT §9 (format, day, board, seed_commit, packer, seed_tile, tiles, zones,
clues, status, stats; then the optional ``difficulty``, the stitcher's level
profile, only when the build had one, ``reuse``, the fair rule's policy (written by a ``fresh``
build; absent means ``any``, as in every manifest before the rule), ``play``, the rule the build
proved the board playable by (``tile-by-tile``: FORMAT §10's closure; absent means ``propagation``,
the frontier proof of every manifest before that rule), and ``build``, the start state
and versions of FORMAT §13), one tile / zone / clue per line, compact separators,
ASCII, ``params`` and ``stats`` with sorted keys, a final newline. So
``from_json(m.to_json()).to_json() == m.to_json()`` byte for byte and a
manifest's sha256 is stable.

``from_json`` accepts a dict or JSON text/bytes and raises ``BadInput``
naming the offending field. It checks shape and local sanity only (types,
formats, ranges, ids = list order, clues inside the board, no duplicate
clue); geometry (overlap, cover) and everything that needs the library is
``referee.verify``'s job. The optional keys are kept and written back;
other unknown top-level keys are ignored (FORMAT §9: "more keys may be
added") and are not written back.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from packers.packing import Packing
from packers.packing import from_json as packing_from_json
from tilelib import days, jsonin
from tilelib.days import seed_commit  # noqa: F401  (re-exported: the one definition is tilelib.days)
from tilelib.errors import BadInput
from tilelib.spent import Reuse

FORMAT = "tiles-manifest/1"
STATUSES = ("frontier", "unique", "ambiguous")
KEY_ORDER = (
    "format",
    "day",
    "board",
    "seed_commit",
    "packer",
    "seed_tile",
    "tiles",
    "zones",
    "clues",
    "status",
    "stats",
)
MAX_MANIFEST_BYTES = 64 << 20  # a G=4096 board (the largest) is ~16 MB
OPTIONAL_KEYS = ("difficulty", "reuse", "play", "build")  # written after KEY_ORDER in this order, only when set
REUSE_POLICIES = tuple(p.value for p in Reuse)  # "fresh", "any"
TILE_BY_TILE = "tile-by-tile"  # the play rule of FORMAT §10's step closure (referee.closure)
PROPAGATION = "propagation"  # the rule before it: the frontier proof alone (the key absent)
PLAY_RULES = (TILE_BY_TILE, PROPAGATION)
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Manifest:
    """One day's board: geometry (``packing``), tile choices, clues, commitment, status and stats."""

    day: str
    seed_commit: str
    packing: Packing
    hashes: tuple[str, ...]
    transforms: tuple[int, ...]
    clues: tuple[tuple[int, int], ...] = ()
    status: str = "frontier"
    stats: Mapping[str, Any] = field(default_factory=dict)
    difficulty: Mapping[str, Any] | None = None  # stitcher.profile JSON form; None: no profile
    reuse: str | None = None  # the fair rule's policy, "fresh" or "any"; None: absent (any)
    play: str | None = None  # the play rule, "tile-by-tile"; None: absent (propagation)
    build: Mapping[str, Any] | None = None  # FORMAT §13: the start state and versions, for replay

    # stats/params are dicts: compares by content, not hashable (Python's idiom; typeshed types
    # object.__hash__ as a method, so mypy refuses the None the data model documents)
    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------ views

    @property
    def G(self) -> int:
        """Board side in cells."""
        return self.packing.P + 1

    def tile_count(self) -> int:
        return len(self.packing.squares)

    @property
    def policy(self) -> str:
        """The policy the board was built under: ``reuse``, or "any" when the key is absent."""
        return self.reuse or "any"

    @property
    def play_rule(self) -> str:
        """The rule the board was proven playable by: ``play``, or "propagation" when the key is absent."""
        return self.play or PROPAGATION

    def tile(self, i: int) -> dict:
        """Tile entry i as in the JSON: id, x0, y0, n, hash, t."""
        x0, y0, s = self.packing.squares[i]
        return {"id": i, "x0": x0, "y0": y0, "n": s + 1, "hash": self.hashes[i], "t": self.transforms[i]}

    def with_clues(self, clues, status: str | None = None, stats: Mapping | None = None) -> Manifest:
        """A copy with other clues (and optionally status / stats); ``build`` is kept."""
        return replace(
            self,
            clues=tuple((int(r), int(c)) for r, c in clues),
            status=self.status if status is None else status,
            stats=dict(self.stats) if stats is None else dict(stats),
        )

    # ------------------------------------------------------------ JSON

    def to_dict(self) -> dict:
        """The manifest as a JSON-ready dict with keys in FORMAT order."""
        p = self.packing
        return (
            {
                "format": FORMAT,
                "day": self.day,
                "board": {"cells": p.P + 1, "pitch": p.P},
                "seed_commit": self.seed_commit,
                "packer": {"name": p.name, "version": p.version, "params": dict(p.params)},
                "seed_tile": p.seed_tile,
                "tiles": [self.tile(i) for i in range(len(p.squares))],
                "zones": [{"id": i, "rects": [list(r) for r in z]} for i, z in enumerate(p.zones)],
                "clues": [[r, c] for r, c in self.clues],
                "status": self.status,
                "stats": dict(self.stats),
            }
            | ({} if self.difficulty is None else {"difficulty": dict(self.difficulty)})
            | ({} if self.reuse is None else {"reuse": self.reuse})
            | ({} if self.play is None else {"play": self.play})
            | ({} if self.build is None else {"build": dict(self.build)})
        )

    def to_json(self) -> str:
        """The one JSON text of this manifest (see the module docstring for its layout)."""
        d = self.to_dict()

        def dump(v: Any) -> str:
            try:
                return json.dumps(v, separators=(",", ":"), ensure_ascii=True, sort_keys=True, allow_nan=False)
            except (ValueError, TypeError) as e:  # NaN/inf or a non-JSON value in params/stats
                raise BadInput(f"manifest: cannot write {key}: {e}") from e

        out = []
        for key in KEY_ORDER + tuple(k for k in OPTIONAL_KEYS if k in d):
            v = d[key]
            if key in ("tiles", "zones", "clues") and v:
                # tiles keep their own key order (id, x0, y0, n, hash, t): no sort_keys there
                items = [json.dumps(x, separators=(",", ":"), ensure_ascii=True) for x in v]
                text = "[\n  " + ",\n  ".join(items) + "\n ]"
            elif key == "packer":
                text = json.dumps({"name": v["name"], "version": v["version"]}, separators=(",", ":"))
                text = text[:-1] + ',"params":' + dump(v["params"]) + "}"
            else:
                text = dump(v)
            out.append(f"{json.dumps(key)}:{text}")
        return "{" + ",\n ".join(out) + "}\n"

    def digest(self) -> str:
        """sha256 hex of ``to_json()`` (names a board, e.g. for the judge's runs)."""
        return hashlib.sha256(self.to_json().encode("ascii")).hexdigest()


# ---------------------------------------------------------------- parsing


def _bad(msg: str) -> BadInput:
    return BadInput(f"manifest: {msg}")


def _int(v: Any, what: str) -> int:
    if type(v) is not int:
        raise _bad(f"{what} must be an integer, got {v!r}")
    return v


def check_day(day: Any, what: str = "day") -> str:
    """An ISO date YYYY-MM-DD that exists on the calendar (``tilelib.days.check_day``), named as a
    manifest field in the message."""
    return days.check_day(day, f"manifest: {what}")


def from_json(obj: Any) -> Manifest:
    """Parse a manifest (dict, or JSON text/bytes); BadInput naming the first malformed field."""
    if isinstance(obj, (bytes, bytearray, str)):
        obj = jsonin.parse(obj, "manifest", MAX_MANIFEST_BYTES)
    if not isinstance(obj, dict):
        raise _bad("top level must be a JSON object")
    for key in KEY_ORDER:
        if key not in obj:
            raise _bad(f"missing key {key!r}")
    if obj["format"] != FORMAT:
        raise _bad(f"format is {obj['format']!r}, this referee reads {FORMAT!r}")
    day = check_day(obj["day"])
    sc = obj["seed_commit"]
    if not isinstance(sc, str) or not _HEX64.fullmatch(sc):
        raise _bad("seed_commit must be 64 lower-case hex digits")
    try:
        packing = packing_from_json(obj)
    except BadInput as e:
        raise _bad(str(e).removeprefix("packing JSON: ")) from None
    hashes, transforms = _tile_refs(obj["tiles"])
    clues = _clues(obj["clues"], packing.P + 1)
    status = obj["status"]
    if status not in STATUSES:
        raise _bad(f"status is {status!r}, expected one of {', '.join(STATUSES)}")
    stats = obj["stats"]
    if not isinstance(stats, dict):
        raise _bad("stats must be an object")
    difficulty = _difficulty(obj.get("difficulty"))
    reuse = _one_of(obj.get("reuse"), REUSE_POLICIES, "reuse", "a policy")
    play = _one_of(obj.get("play"), PLAY_RULES, "play", "a rule")
    build = _build(obj["build"]) if "build" in obj else None
    return Manifest(
        day=day,
        seed_commit=sc,
        packing=packing,
        hashes=tuple(hashes),
        transforms=tuple(transforms),
        clues=tuple(clues),
        status=status,
        stats=dict(stats),
        difficulty=difficulty,
        reuse=reuse,
        play=play,
        build=build,
    )


def _tile_refs(tiles: list) -> tuple[list[str], list[int]]:
    """The (hash, t) of each tile entry, in order (the packing parser has checked the list)."""
    hashes, transforms = [], []
    for i, t in enumerate(tiles):
        for key in ("hash", "t"):
            if key not in t:
                raise _bad(f"tiles[{i}] lacks {key!r}")
        h = t["hash"]
        if not isinstance(h, str) or not _HEX64.fullmatch(h):
            raise _bad(f"tiles[{i}].hash must be 64 lower-case hex digits")
        tt = _int(t["t"], f"tiles[{i}].t")
        if not 0 <= tt <= 15:
            raise _bad(f"tiles[{i}].t is {tt}, a transform is 0..15")
        hashes.append(h)
        transforms.append(tt)
    return hashes, transforms


def _clues(clues_in: Any, G: int) -> list[tuple[int, int]]:
    """The clue cells [row, col]: on the G×G board, none repeated."""
    if not isinstance(clues_in, list):
        raise _bad("clues must be a list of [row, col]")
    clues, seen = [], set()
    for i, rc in enumerate(clues_in):
        if not isinstance(rc, list) or len(rc) != 2:
            raise _bad(f"clues[{i}] must be [row, col]")
        r, c = _int(rc[0], f"clues[{i}] row"), _int(rc[1], f"clues[{i}] col")
        if not (0 <= r < G and 0 <= c < G):
            raise _bad(f"clues[{i}] [{r}, {c}] lies outside the {G}x{G} board")
        if (r, c) in seen:
            raise _bad(f"clues[{i}] [{r}, {c}] repeats an earlier clue")
        seen.add((r, c))
        clues.append((r, c))
    return clues


def _difficulty(difficulty: Any) -> dict | None:
    """The optional difficulty profile, checked by ``tilelib.difficulty.parse_profile``."""
    if difficulty is None:
        return None
    from tilelib.difficulty import parse_profile

    if not isinstance(difficulty, dict):
        raise _bad("difficulty must be an object")
    try:
        parse_profile(difficulty)
    except BadInput as e:
        raise _bad(f"difficulty: {e}") from None
    return dict(difficulty)


def _one_of(value: Any, allowed, key: str, kind: str) -> str | None:
    """An optional string key (``reuse``, ``play``) that must name one of ``allowed``."""
    if value is not None and (not isinstance(value, str) or value not in allowed):
        raise _bad(f"{key} is {value!r}, {kind} this referee knows is one of {', '.join(allowed)}")
    return value


def _build(b: Any) -> dict:
    """FORMAT §13's ``build`` object: {"snapshot": sha256 hex or null, "deltas": [sha256 hex, …],
    "versions": {name: string or int}}."""
    if not isinstance(b, dict) or set(b) - {"snapshot", "deltas", "versions"}:
        raise _bad("build must be an object with keys snapshot, deltas and versions")
    snap = b.get("snapshot")
    if snap is not None and (not isinstance(snap, str) or not _HEX64.fullmatch(snap)):
        raise _bad("build.snapshot must be null or 64 lower-case hex digits")
    deltas = b.get("deltas", [])
    if (
        not isinstance(deltas, list)
        or len(deltas) > 256
        or not all(isinstance(d, str) and _HEX64.fullmatch(d) for d in deltas)
    ):
        raise _bad("build.deltas must be a list of up to 256 sha256 hex digests")
    ver = b.get("versions", {})
    if (
        not isinstance(ver, dict)
        or len(ver) > 16
        or not all(
            isinstance(k, str) and len(k) <= 32 and (type(v) is int or (isinstance(v, str) and len(v) <= 64))
            for k, v in ver.items()
        )
    ):
        raise _bad("build.versions must map up to 16 names to short strings or integers")
    return {"snapshot": snap, "deltas": list(deltas), "versions": dict(ver)}


def load(path) -> Manifest:
    """Read and parse a manifest file; BadInput if it cannot be read, is over the size cap, or is malformed."""
    return from_json(jsonin.read_file(path, "manifest", MAX_MANIFEST_BYTES))
