"""The fair rule's ledger in process (``tilelib.spent``): which tiles are held, a board's solutions and the
rows it adds, the live boards of a library, and each way a fresh board breaks the rule — from the module's
definitions, on a real library file. The builds that use them run in test_fair_*.py; these are quick
enough to judge every mutant of the module (scripts/mutation.py)."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest
from remote_support import random_tiles

from tilelib import ledger, spent
from tilelib.db import atomic
from tilelib.errors import BadInput
from tilelib.spent import Reuse, SpentRow
from tilelib.store import Library

DAY, OTHER, THIRD = "2026-11-02", "2026-11-01", "2026-10-31"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def lib(tmp_path):
    """A library with five n = 10 tiles, two n = 6 tiles and one n = 12 tile."""
    with Library.create(tmp_path / "lib.sqlite") as library:
        tiles = random_tiles(1, 5, 10) + random_tiles(2, 2, 6) + random_tiles(3, 1, 12)
        assert library.insert_many(tiles) == 8
        library.tiles_made = tiles
        yield library


def sol(t) -> str:
    return spent.solution_hash(t.n, spent.canonical_solution(t.n, t.solution))


def test_held_sides_are_ten_and_up():
    assert [n for n in range(6, 17, 2) if spent.held(n)] == [10, 12, 14, 16]
    assert spent.held(spent.FRESH_MIN_N) and not spent.held(spent.FRESH_MIN_N - 1)


def test_reuse_parses_and_names_the_option_it_came_from():
    assert Reuse.parse(None) is Reuse.FRESH and Reuse.parse("any") is Reuse.ANY and Reuse.parse(Reuse.ANY) is Reuse.ANY
    with pytest.raises(BadInput) as e:
        Reuse.parse("some")
    assert str(e.value) == "--reuse must be one of fresh, any, not 'some'"
    with pytest.raises(BadInput, match=r"^reuse must be one of fresh, any, not 'FRESH'$"):
        Reuse.parse("FRESH", "reuse")


def test_a_boards_solutions_are_its_held_tiles_in_id_order(lib):
    t = lib.tiles_made
    hashes = [t[5].hash, t[0].hash, t[7].hash, "f" * 64, t[6].hash, t[1].hash, t[0].hash]
    got = spent.board_solutions(lib.conn, hashes)
    assert got == [(1, 10, sol(t[0])), (2, 12, sol(t[7])), (5, 10, sol(t[1])), (6, 10, sol(t[0]))]
    assert spent.board_solutions(lib.conn, []) == []


def test_a_board_adds_one_row_per_distinct_held_solution_sorted(lib):
    t = lib.tiles_made
    rows = spent.board_rows(lib.conn, [t[2].hash, t[5].hash, t[0].hash, t[2].hash], "b" * 64, DAY)
    want = sorted(
        [SpentRow(sol(t[2]), "b" * 64, 10, DAY), SpentRow(sol(t[0]), "b" * 64, 10, DAY)], key=lambda r: r.solution
    )
    assert rows == want


def test_record_counts_new_rows_and_rows_of_returns_them_in_order(lib):
    rows = [SpentRow(f"{k:02x}" * 32, b * 64, 10, DAY) for k in (3, 1, 2) for b in "ab"]
    with atomic(lib.conn):
        assert spent.record(lib.conn, rows, now=5) == 6
    with atomic(lib.conn):
        assert spent.record(lib.conn, rows[:2] + [SpentRow("04" * 32, "a" * 64, 12, OTHER)], now=6) == 1
    assert spent.count(lib.conn) == (7, 4)
    got = spent.rows_of(lib.conn, ["02" * 32, "01" * 32, "02" * 32, "09" * 32])
    assert got == sorted((r for r in rows if r.solution in ("01" * 32, "02" * 32)), key=lambda r: (r.solution, r.board))
    assert spent.spent_of(lib.conn, ["04" * 32, "05" * 32]) == {"04" * 32}
    assert lib.conn.execute("SELECT DISTINCT created FROM spent WHERE solution = ?", ("04" * 32,)).fetchall() == [(6,)]
    assert spent.rows_of(lib.conn, []) == []


def test_rows_of_many_solutions_reads_them_all(lib):
    rows = [SpentRow(f"{k:064x}", "c" * 64, 10, DAY) for k in range(1203)]  # more than two chunks of 500
    with atomic(lib.conn):
        spent.record(lib.conn, rows)
    assert spent.rows_of(lib.conn, [r.solution for r in rows]) == sorted(rows, key=lambda r: r.solution)


def test_record_without_now_stamps_the_clock(lib):
    import time

    before = int(time.time())
    with atomic(lib.conn):
        spent.record(lib.conn, [SpentRow("0a" * 32, "b" * 64, 10, DAY)])
    (created,) = lib.conn.execute("SELECT created FROM spent").fetchone()
    assert before <= created <= int(time.time())


def test_a_library_without_the_table_has_nothing_spent(tmp_path):
    conn = sqlite3.connect(tmp_path / "old.sqlite")
    conn.execute("CREATE TABLE tiles (hash TEXT)")
    assert not spent.has_table(conn) and spent.count(conn) == (0, 0) and spent.rows_of(conn, ["aa"]) == []
    conn.execute("ATTACH ? AS other", (str(tmp_path / "other.sqlite"),))
    conn.execute("CREATE TABLE other.spent (solution TEXT)")
    assert spent.has_table(conn, "other") and not spent.has_table(conn)
    conn.close()


def test_live_boards_are_the_digests_of_the_manifests_held(lib):
    ledger.put_manifest(lib.conn, OTHER, "c0", '{"a": 1}')
    ledger.put_manifest(lib.conn, THIRD, "c1", '{"b": "\u00e9"}')
    assert spent.live_boards(lib.conn, [OTHER, THIRD, "2020-01-01", OTHER]) == {
        OTHER: digest('{"a": 1}'),
        THIRD: digest('{"b": "\u00e9"}'),
    }
    assert spent.live_boards(lib.conn, []) == {}


def test_a_fresh_board_is_fair_unless_it_repeats_or_reuses_a_live_boards_solution(lib):
    t = lib.tiles_made
    placed = spent.board_solutions(lib.conn, [t[0].hash, t[1].hash, t[7].hash])
    assert spent.unfair(lib.conn, DAY, placed) is None
    twice = spent.board_solutions(lib.conn, [t[0].hash, t[1].hash, t[0].hash])
    assert spent.unfair(lib.conn, DAY, twice) == "tile 2 (n = 10) places the solution of tile 0 again"
    # a board of another day, held by the library, used t[1]'s solution: named by tile, day and board
    text = '{"day": "other"}'
    ledger.put_manifest(lib.conn, OTHER, "c0", text, spent=[SpentRow(sol(t[1]), digest(text), 10, OTHER)])
    assert spent.unfair(lib.conn, DAY, placed) == (
        f"tile 1 (n = 10) places solution {sol(t[1])[:12]}… that the board of {OTHER} ({digest(text)[:12]}…) "
        "already used"
    )


def test_rows_that_spent_nothing_anyone_could_see_do_not_count(lib):
    t = lib.tiles_made
    placed = spent.board_solutions(lib.conn, [t[0].hash, t[1].hash])
    with atomic(lib.conn):
        spent.record(
            lib.conn,
            [
                SpentRow(sol(t[0]), "d" * 64, 10, THIRD),  # a board of a day the library holds no manifest of
                SpentRow(sol(t[1]), "e" * 64, 10, DAY),  # its own day: its own rows, or a rebuild's
            ],
        )
    ledger.put_manifest(lib.conn, OTHER, "c0", '{"x": 0}', spent=[SpentRow(sol(t[0]), "f" * 64, 10, OTHER)])
    assert spent.unfair(lib.conn, DAY, placed) is None  # OTHER's live board is not f…f: withdrawn
    ledger.put_manifest(lib.conn, THIRD, "c1", '{"y": 0}')
    assert spent.unfair(lib.conn, DAY, placed) is None  # THIRD's board is not d…d either
    assert spent.unfair(lib.conn, OTHER, placed) is None  # OTHER's own rows never count against OTHER


def test_a_row_the_file_drops_is_named_in_full_words(lib):
    """The message a dropped spent row gives: the first 12 hex digits of each name, then the count."""
    row = SpentRow("ab" * 32, "cd" * 32, 10, DAY)
    lib.conn.execute(
        f"CREATE TRIGGER d BEFORE INSERT ON spent WHEN NEW.solution = '{row.solution}' BEGIN SELECT RAISE(IGNORE); END"
    )
    from tilelib.errors import RowsNotStored

    with pytest.raises(RowsNotStored) as e:
        with atomic(lib.conn):
            spent.record(lib.conn, [row, SpentRow("ef" * 32, "cd" * 32, 10, DAY)])
    assert str(e.value) == (
        "the spent row of solution abababababab… on board cdcdcdcdcdcd… was recorded and is not stored "
        "(1 of 2 rows missing)"
    )
