"""A write transaction of the runs database on both backends (``referee.runsdb``): ``Tx.write`` (sent
without waiting on PostgreSQL, in pipeline mode) is kept with the commit; a queued write the database
refuses fails the whole block as the database error it is (nothing kept, not "may or may not be
kept"); ``lock_run`` with an idempotency key reads what the key stored in the same read. And a batch
of moves on PostgreSQL waits for two answers before its ``COMMIT`` (the run's row with its key, the
moves' ids), however many statements it sends."""

from __future__ import annotations

import pytest
from serve_support import board21_day

from referee.runsdb import is_url, opened
from referee.runsdb import postgres as pg
from referee.service.boards import DayBoard, load_manifest
from referee.service.runs import RunStore
from tilelib.errors import BadInput, CorruptLibrary, NotFound, Unauthorized
from tilelib.store import Library

INSERT_RUN = "INSERT INTO runs (run, board, day, created) VALUES (?,?,?,?)"


def test_writes_are_kept_with_the_commit_and_read_back_in_the_block(runs_target):
    with opened(runs_target) as db:

        def block(tx):
            tx.write(INSERT_RUN, ("ra", "b" * 64, "2026-01-01", 1))
            tx.write("UPDATE runs SET nmoves = nmoves + 5 WHERE run = ?", ("ra",))
            return tx.one("SELECT nmoves FROM runs WHERE run = ?", ("ra",))  # sees the queued writes

        assert db.atomic(block) == (5,)
        assert db.read("SELECT run, nmoves FROM runs") == [("ra", 5)]


def test_a_refused_queued_write_fails_the_block_and_keeps_nothing(runs_target):
    with opened(runs_target) as db:
        db.atomic(lambda tx: tx.write(INSERT_RUN, ("ra", "b" * 64, "2026-01-01", 1)))

        def block(tx):
            tx.write(INSERT_RUN, ("rb", "b" * 64, "2026-01-01", 1))
            tx.write(INSERT_RUN, ("ra", "b" * 64, "2026-01-01", 1))  # the primary key again: refused

        with pytest.raises(Exception) as got:
            db.atomic(block)
        if is_url(runs_target):  # PostgreSQL answered for the block: a database error, not "unavailable"
            assert got.type is CorruptLibrary and "duplicate key" in str(got.value)
        assert db.read("SELECT run FROM runs ORDER BY run") == [("ra",)]
        db.atomic(lambda tx: tx.write(INSERT_RUN, ("rc", "b" * 64, "2026-01-01", 1)))  # the connection still serves
        assert db.read("SELECT run FROM runs ORDER BY run") == [("ra",), ("rc",)]


def test_the_locked_row_carries_what_the_key_stored(runs_target):
    with opened(runs_target) as db:

        def store(tx):
            tx.write(INSERT_RUN, ("ra", "b" * 64, "2026-01-01", 1))
            tx.write(
                "INSERT INTO idempotency (run, key, body_sha256, answer, at) VALUES (?,?,?,?,?)",
                ("ra", "k1", "d" * 64, '{"x":1}', 1),
            )

        db.atomic(store)
        plain = db.atomic(lambda tx: tx.lock_run("ra"))
        assert plain == ("b" * 64, "2026-01-01", 1, 0, None, None)
        assert db.atomic(lambda tx: tx.lock_run("ra", "k1")) == plain + ("d" * 64, '{"x":1}')
        assert db.atomic(lambda tx: tx.lock_run("ra", "k2")) == plain + (None, None)
        assert db.atomic(lambda tx: tx.lock_run("nope", "k1")) is None


@pytest.fixture(scope="module")
def day21(tmp_path_factory):
    fx, _d, manifest, truth = board21_day(tmp_path_factory, "tx21")
    return fx.lib_path, load_manifest(manifest), truth


def test_a_batch_waits_for_two_answers_before_its_commit(day21, pg_url, monkeypatch):
    lib_path, m, truth = day21
    with Library.open(lib_path) as lib:
        store = RunStore(pg_url, {m.day: DayBoard.load(m, lib, pg_url)})
    waits = []
    for name in ("rows", "one"):
        real = getattr(pg._Tx, name)
        monkeypatch.setattr(
            pg._Tx, name, lambda self, sql, args=(), _r=real: waits.append(sql[:30]) or _r(self, sql, args)
        )
    try:
        st, token = store.create(m.day, "p")
        seed = sorted(st.frontier)[0]
        waits.clear()
        first = store.submit(st.run, token, [{"tile": seed, "cells": truth.truth(seed)}], "key-1")
        assert first.answer["verdicts"][0]["correct"] and not first.replayed
        assert [w.split()[0] for w in waits] == ["SELECT", "INSERT"], waits  # row+key, the moves' ids
        waits.clear()
        again = store.submit(st.run, token, [{"tile": seed, "cells": truth.truth(seed)}], "key-1")
        assert again.answer == first.answer and again.replayed and len(waits) == 1  # answered from the key
        assert store.score(store.get(st.run))["moves"] == 1
    finally:
        store.close()


def test_a_batch_refuses_in_the_documented_order(day21, runs_target):
    """The run first, then the token, then the caller's check, then a malformed key: nothing stored."""
    lib_path, m, truth = day21
    with Library.open(lib_path) as lib:
        store = RunStore(runs_target, {m.day: DayBoard.load(m, lib, runs_target)})
    try:
        st, token = store.create(m.day, "p")

        def refuse(_s):
            raise BadInput("the check")

        with pytest.raises(NotFound):
            store.submit("r0000", token, [], "bad key\x01", check=refuse)
        with pytest.raises(Unauthorized):
            store.submit(st.run, None, [], "bad key\x01", check=refuse)
        with pytest.raises(BadInput, match="the check"):
            store.submit(st.run, token, [], "bad key\x01", check=refuse)
        with pytest.raises(BadInput, match="Idempotency-Key"):
            store.submit(st.run, token, [], "bad key\x01")
        assert store.score(store.get(st.run))["moves"] == 0
    finally:
        store.close()
