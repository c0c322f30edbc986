"""The project's own pseudo-random stream: SHA-256 in counter mode.

Every random choice in tiles (packing, stitching, generation, thinning) draws
from a ``Stream``, so its output is fixed by this file alone, never by a numpy
or Python version: a board rebuilds bit-for-bit on any machine from its seed.

Block i of stream (seed, label) is ``sha256(seed || len(label) || label || i)``
with ``len`` as 4 bytes big-endian and ``i`` as 8 bytes big-endian; the blocks'
bytes are consumed in order. Integers are drawn by rejection sampling (no
modulo bias), floats from 53 bits.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")


class Stream:
    """A deterministic byte stream keyed by (seed, label), with the usual draws on top.

    ``block`` (the current SHA-256 block, ``b""`` before the first draw) and ``pos`` (how many of
    its bytes are consumed) are public for fast readers in C (``tilelib/_stream.h``): a reader
    that wants k bytes with ``pos + k <= len(block)`` takes ``block[pos:pos + k]`` and sets
    ``pos += k``, exactly what ``bytes(k)`` does; otherwise it calls ``bytes(k)``, which
    refills. Nothing else may write them.
    """

    __slots__ = ("seed", "label", "_counter", "block", "pos", "_prefix")

    def __init__(self, seed: bytes, label: str = "") -> None:
        if not isinstance(seed, (bytes, bytearray)):
            raise TypeError("seed must be bytes")
        self.seed = bytes(seed)
        self.label = label
        self._counter = 0
        self.block = b""
        self.pos = 0
        self._prefix = b""  # seed || len(label) || label, made at the first block

    def child(self, label: str) -> Stream:
        """An independent stream for a sub-task: same seed, label extended with ``/label``. (The
        seed is already checked bytes: the new stream's slots are set without ``__init__``, which
        was a fifth of a generated tile's stream work — each tile opens five.)"""
        s = _new_stream(Stream)
        s.seed, s.label, s._counter, s.block, s.pos, s._prefix = (
            self.seed,
            f"{self.label}/{label}" if self.label else label,
            0,
            b"",
            0,
            b"",
        )
        return s

    def bytes(self, k: int) -> bytes:
        """The next k bytes of the stream: the rest of the current block, then whole new blocks,
        the last one consumed up to what is needed (it stays current, with ``pos`` after them)."""
        block, pos = self.block, self.pos
        if pos + k <= len(block):
            self.pos = pos + k
            return block[pos : pos + k]
        need = k - (len(block) - pos)
        if not self._prefix:
            lab = self.label.encode("utf-8")
            self._prefix = self.seed + len(lab).to_bytes(4, "big") + lab
        first, prefix, sha = self._counter, self._prefix, hashlib.sha256
        if need <= 32:  # one new block: most reads
            new = sha(prefix + first.to_bytes(8, "big")).digest()
            self._counter, self.block, self.pos = first + 1, new, need
            return block[pos:] + new[:need]
        count = (need + 31) // 32  # whole 32-byte blocks, made in one comprehension: the loop's
        # bookkeeping per block cost more than the hash (a 6x6 tile's removal order reads 4 blocks)
        blocks = [sha(prefix + c.to_bytes(8, "big")).digest() for c in range(first, first + count)]
        self._counter = first + count
        self.block, self.pos = blocks[-1], need - 32 * (count - 1)
        return block[pos:] + b"".join(blocks)[:need]

    def bits(self, k: int) -> int:
        """A uniform int of k bits."""
        nbytes = (k + 7) // 8
        return int.from_bytes(self.bytes(nbytes), "big") >> (8 * nbytes - k)

    def randbelow(self, n: int) -> int:
        """A uniform int in [0, n), by rejection sampling."""
        if n <= 0:
            raise ValueError("randbelow needs n > 0")
        k = max(1, (n - 1).bit_length())
        while True:
            v = self.bits(k)
            if v < n:
                return v

    def randint(self, lo: int, hi: int) -> int:
        """A uniform int in [lo, hi] (both ends included)."""
        return lo + self.randbelow(hi - lo + 1)

    def random(self) -> float:
        """A uniform float in [0, 1) with 53 random bits."""
        return self.bits(53) / (1 << 53)

    def choice(self, seq: Sequence[T]) -> T:
        """A uniform element of a non-empty sequence."""
        return seq[self.randbelow(len(seq))]

    def weighted(self, weights: Sequence[int]) -> int:
        """An index drawn with probability proportional to integer weights."""
        total = sum(weights)
        x = self.randbelow(total)
        for i, w in enumerate(weights):
            x -= w
            if x < 0:
                return i
        raise AssertionError("unreachable")

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher–Yates shuffle in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]


_new_stream = object.__new__


def seed_from_hex(text: str) -> bytes:
    """Parse a 64-hex-digit seed; raise BadInput otherwise."""
    from tilelib.errors import BadInput

    s = text.strip().lower()
    if len(s) != 64 or any(c not in "0123456789abcdef" for c in s):
        raise BadInput("seed must be 64 hex digits (32 bytes)")
    return bytes.fromhex(s)
