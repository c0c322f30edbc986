"""The stream (FORMAT §7): any sequence of reads gives the bytes of the independent definition, and
the public block/pos state that C readers take bytes from always points at the next ones."""

from hypothesis import given, settings
from hypothesis import strategies as st
from independent_verifier import stream_bytes

from tilelib.rng import Stream


@settings(max_examples=200)
@given(
    seed=st.binary(min_size=32, max_size=32),
    label=st.text(max_size=12),
    reads=st.lists(st.integers(0, 100), max_size=12),
)
def test_reads_of_any_sizes_are_the_defined_bytes(seed, label, reads):
    s = Stream(seed, label)
    want = stream_bytes(seed, label, sum(reads) + 64)
    at = 0
    for k in reads:
        got = s.bytes(k)
        assert got == want[at : at + k]
        at += k
        # what a C reader takes without calling bytes(): the rest of the current block
        rest = s.block[s.pos :]
        assert rest == want[at : at + len(rest)] and 0 <= s.pos <= len(s.block)
    assert s.bits(16) == int.from_bytes(want[at : at + 2], "big")


def test_a_block_read_to_its_end_stays_current():
    """A read ending exactly at a block's end computes no further block (as FORMAT §7's reader)."""
    s = Stream(bytes(32), "x")
    s.bytes(32)
    assert (s.pos, len(s.block)) == (32, 32)
    s.bytes(64)
    assert (s.pos, len(s.block)) == (32, 32)
