"""Misses and manifests: canonical dedupe, counters, nofit containment, drained rows."""

import pytest

from tilelib import ledger
from tilelib.constraint import Constraint, push_forward
from tilelib.errors import BadInput
from tilelib.symmetry import TRANSFORMS


def test_same_miss_in_any_orientation_is_one_row_with_a_counter(lib):
    c = Constraint.sides(8, top=0b00110011, left=0b01010101)
    rows = [ledger.record_miss(lib.conn, push_forward(c, t), packing="p1") for t in TRANSFORMS]
    assert len({r.id for r in rows}) == 1
    assert rows[-1].count == 16
    assert len(ledger.open_misses(lib.conn)) == 1


def test_drained_and_nofit_misses_leave_the_open_list(lib):
    a = ledger.record_miss(lib.conn, Constraint.sides(6, top=0b001011))
    b = ledger.record_miss(lib.conn, Constraint.sides(6, top=0b010011, right=0b001101))
    ledger.mark_drained(lib.conn, a.id, "ab" * 32)
    ledger.mark_nofit(lib.conn, b.id)
    assert ledger.open_misses(lib.conn) == []
    assert ledger.get_miss(lib.conn, b.id).nofit
    assert ledger.get_miss(lib.conn, a.id).tile == "ab" * 32
    with pytest.raises(BadInput):
        ledger.get_miss(lib.conn, 999)


def test_settled_nofit_by_containment_in_any_orientation():
    bad = Constraint(6, (0b110000, 0, 0, 0), (0b110000, 0, 0, 0))  # top starts 11
    harder = Constraint(6, (0b111111, 0b111111, 0, 0), (0b110100, 0b001011, 0, 0))
    unrelated = Constraint(6, (0b111111, 0, 0, 0), (0b010110, 0, 0, 0))
    for t in TRANSFORMS:
        assert ledger.settled_nofit(push_forward(harder, t), [bad])
    assert not ledger.settled_nofit(unrelated, [bad])
    # containment is not symmetric: the weaker constraint is not settled by the harder one
    assert not ledger.settled_nofit(bad, [harder])


def test_manifests_append_only(lib):
    ledger.put_manifest(lib.conn, "2026-11-29", "c" * 64, '{"a": 1}')
    assert ledger.get_manifest(lib.conn, "2026-11-29") == '{"a": 1}'
    with pytest.raises(BadInput):
        ledger.put_manifest(lib.conn, "2026-11-29", "c" * 64, '{"a": 2}')
    ledger.put_manifest(lib.conn, "2026-11-29", "c" * 64, '{"a": 2}', replace=True)
    assert ledger.manifest_days(lib.conn) == ["2026-11-29"]
    assert ledger.get_manifest(lib.conn, "2026-11-30") is None
