"""The packers (FORMAT §6–7): seeded packings of the board in pitch space, behind one protocol.

Every packer module exposes ``NAME``, ``VERSION``, ``DEFAULTS``, ``ORDER`` (the order the stitcher
places its squares in: ``stitcher.order.ORDERS``), ``check_params(params) -> params`` and
``pack(P, rng, params) -> Packing`` — pure and deterministic: the same (P, stream, params)
always gives the same packing, and all randomness comes from the ``tilelib.rng.Stream`` passed in.
Variants are params, not subclasses. The packing records the full effective params (defaults
merged), so (name, version, params, seed) reproduces it anywhere.

``make_packing(name, G, seed, params)`` is the one entry point for the CLI, the daily build and the
referee's re-draw: it uses the stream ``Stream(seed, "pack/" + name)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from packers.packing import MAX_PITCH, Packing, from_json, validate_packing
from tilelib import plugins
from tilelib.errors import BadInput
from tilelib.rng import Stream

MIN_G = 6
"""Smallest board: P = G - 1 must hold one legal square (s >= 5)."""
MAX_G = MAX_PITCH + 1
"""Largest board the validator checks (see packing.MAX_PITCH)."""


@dataclass(frozen=True)
class Packer:
    """A registered packer: its name, version, default params, the stitcher's placement order for its
    packings and its pack function."""

    name: str
    version: int
    defaults: dict
    order: str
    check_params: Callable[[dict], dict]
    pack: Callable[[int, Stream, dict], Packing]


def _entry(mod) -> Packer:
    return Packer(mod.NAME, mod.VERSION, dict(mod.DEFAULTS), mod.ORDER, mod.check_params, mod.pack)


# Every packer of the one registry (``tilelib.plugins``), in its order; the first is the default.
PACKERS: dict[str, Packer] = {n: _entry(plugins.load(plugins.PACKER, n)) for n in plugins.names(plugins.PACKER)}
DEFAULT_PACKER = plugins.names(plugins.PACKER)[0]


def get_packer(name: str) -> Packer:
    """The registered packer called ``name``; BadInput if there is none."""
    try:
        return PACKERS[name]
    except KeyError:
        raise BadInput(f"unknown packer {name!r} (known: {', '.join(sorted(PACKERS))})") from None


def check_size(G) -> int:
    """G as a board side in cells: an integer in 6..4096 (even sizes such as the default 1000 are fine)."""
    if type(G) is not int or not MIN_G <= G <= MAX_G:
        raise BadInput(f"board size must be an integer in {MIN_G}..{MAX_G} cells, got {G!r}")
    return G


def check_request(name: str, G, params: dict | None = None) -> dict:
    """Validate a packing request without packing: the packer exists, G is a board size, the params
    are the packer's (BadInput otherwise). Returns the effective params."""
    packer = get_packer(name)
    check_size(G)
    try:
        return packer.check_params(dict(params or {}))
    except ValueError as e:
        raise BadInput(f"{name}: {e}") from None


def make_packing(name: str, G: int, seed: bytes, params: dict | None = None) -> Packing:
    """Pack a G×G board with packer ``name`` from a 32-byte seed, via ``Stream(seed, "pack/" + name)``.

    Raises BadInput for an unknown packer, a bad size or bad params.
    """
    p = check_request(name, G, params)
    if not isinstance(seed, (bytes, bytearray)):
        raise BadInput("seed must be bytes")
    return get_packer(name).pack(G - 1, Stream(bytes(seed), "pack/" + name), p)


__all__ = [
    "PACKERS",
    "DEFAULT_PACKER",
    "Packer",
    "Packing",
    "get_packer",
    "make_packing",
    "validate_packing",
    "from_json",
    "check_size",
    "check_request",
]
