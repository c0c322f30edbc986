"""The fair rule's stock (issue 31; tilelib/stock.py): unspent rows and solutions per n >= 10, per
edge class, what each night drew and made, nights left.

Two fresh G=61 nights on one library, with tiles generated between them. The report's counts equal this file's own
count, made
with sqlite3 and test_spent_ledger's own solution hash and its own reading of the seam-mask
shapes; the cache beside the library, refreshed after new tiles and a merge's spent rows,
equals a full scan; a cache of another library or a damaged one is not trusted; what a night
drew and made adds up to its fresh tiles; a board the library no longer holds does not count;
the night records never enter a snapshot."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_support import run_tiles
from hypothesis import given
from hypothesis import strategies as st
from test_spent_ledger import own_hash

from tilelib import stock
from tilelib.bits import from_blob

SECRET = {"TILES_SECRET": "stock-secret"}
DAYS = ("2026-10-01", "2026-10-02")


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    root = tmp_path_factory.mktemp("stock")
    lib, out = root / "lib.sqlite", root / "out"
    summaries = []
    for day in DAYS:
        r = run_tiles(
            "daily", "build", "--date", day, "--size", "61", "--library", lib, "--out", out, "--json", env=SECRET
        )
        assert r.returncode == 0, r.stderr[-2000:]
        summaries.append(json.loads(r.stdout))
        if day == DAYS[0]:  # a top-up between the nights: a stock for night 2 to draw on
            for n, count, mask in ((10, 30, 0), (12, 6, 3)):
                g = run_tiles(
                    "library",
                    "generate",
                    "--n",
                    str(n),
                    "--count",
                    str(count),
                    "--seam-mask",
                    str(mask),
                    "--seed",
                    f"{n:02d}" * 32,
                    "--library",
                    lib,
                )
                assert g.returncode == 0, g.stderr
    return {"root": root, "lib": lib, "summaries": summaries}


def _own_shape(mask: int) -> str:
    sides = [b for b in range(4) if mask >> b & 1]
    if len(sides) == 2:
        return "opposite" if (sides[1] - sides[0]) == 2 else "corner"
    return {0: "none", 1: "one", 3: "three", 4: "four"}[len(sides)]


def _own_count(lib: Path) -> dict:
    """Per n >= 10: rows, unspent rows, distinct unspent solutions, unspent rows per shape."""
    conn = sqlite3.connect(lib)
    spent = {s for (s,) in conn.execute("SELECT solution FROM spent")}
    out = {}
    for n, mask, sol in conn.execute("SELECT n, seam_mask, solution FROM tiles WHERE n >= 10"):
        h = own_hash(from_blob(bytes(sol), n))
        d = out.setdefault(str(n), {"rows": 0, "unspent": 0, "sols": set(), "per_class": {}})
        d["rows"] += 1
        if h not in spent:
            d["unspent"] += 1
            d["sols"].add(h)
            d["per_class"][_own_shape(mask)] = d["per_class"].get(_own_shape(mask), 0) + 1
    conn.close()
    return {
        n: {"rows": d["rows"], "unspent": d["unspent"], "solutions": len(d["sols"]), "per_class": d["per_class"]}
        for n, d in out.items()
    }


def _counts_of(rep: dict) -> dict:
    return {
        n: {
            "rows": c["rows"],
            "unspent": c["unspent"],
            "solutions": c["solutions"],
            "per_class": {k: v for k, v in c["per_class"].items() if v},
        }
        for n, c in rep["per_n"].items()
        if c["rows"]
    }


def _report(lib: Path, cached: bool = True) -> dict:
    conn = sqlite3.connect(lib)
    try:
        return stock.report(conn, lib if cached else None)
    finally:
        conn.close()


def test_the_counts_equal_an_independent_count_and_the_build_reports_them(nights):
    lib = nights["lib"]
    own = _own_count(lib)
    assert own and any(d["unspent"] for d in own.values()) and any(d["unspent"] < d["rows"] for d in own.values())
    rep = _report(lib)
    assert _counts_of(rep) == own
    assert _counts_of(_report(lib, cached=False)) == own
    # the second build's --json carries the same stock, after its board was stored
    last = nights["summaries"][-1]
    assert _counts_of(last["stock"]) == own and last["stages"]["stock"]["load"]["source"] in ("refresh", "scan")
    assert rep["nights"] == list(reversed(DAYS)) and rep["empty"] == [
        int(n) for n, c in rep["per_n"].items() if not c["solutions"]
    ]


def test_what_a_night_drew_and_made_adds_up_to_its_fresh_tiles_and_sets_the_rate(nights):
    lib = nights["lib"]
    conn = sqlite3.connect(lib)
    recs = dict(stock.nights(conn))
    conn.close()
    assert set(recs) == set(DAYS)
    for day, summary in zip(DAYS, nights["summaries"], strict=True):
        per_n = summary["fairness"]["per_n"]
        for n, d in per_n.items():
            assert d["drawn"] + d["made"] == d["fresh"]
            if int(n) >= 10:
                assert (recs[day]["drawn"][n], recs[day]["made"][n]) == (d["drawn"], d["made"])
                assert recs[day]["left"][n] == summary["stock"]["per_n"][n]["solutions"]
        assert recs[day]["board"] == hashlib.sha256(Path(summary["manifest"]).read_bytes()).hexdigest()
    # night 1 started from an empty library: it drew nothing
    assert all(d["drawn"] == 0 for d in nights["summaries"][0]["fairness"]["per_n"].values())
    rep = _report(lib)
    for n, c in rep["per_n"].items():
        assert c["started"] == recs[DAYS[1]]["left"][n] + recs[DAYS[1]]["drawn"].get(n, 0)
        drawn = [recs[d]["drawn"].get(n, 0) for d in DAYS]
        assert c["drawn_per_night"] == pytest.approx(sum(drawn) / 2)
        assert c["nights_left"] == (round(c["solutions"] / c["drawn_per_night"], 1) if c["drawn_per_night"] else None)


def test_a_night_whose_board_the_library_no_longer_holds_does_not_count(nights, tmp_path):
    lib = tmp_path / "lib.sqlite"
    shutil.copy(nights["lib"], lib)
    conn = sqlite3.connect(lib)
    conn.execute("DROP TRIGGER IF EXISTS manifests_updated")
    conn.execute("UPDATE manifests SET json = json || ' ' WHERE day = ?", (DAYS[0],))  # another board
    conn.commit()
    assert [d for d, _ in stock.nights(conn)] == [DAYS[1]]
    conn.close()


def test_the_cache_refreshed_after_new_tiles_and_merged_spent_rows_equals_a_scan(nights, tmp_path):
    lib = tmp_path / "lib.sqlite"
    shutil.copy(nights["lib"], lib)
    shutil.copy(str(nights["lib"]) + stock.SUFFIX, str(lib) + stock.SUFFIX)
    assert _report(lib)["load"]["source"] == "cache"
    r = run_tiles(
        "library", "generate", "--n", "10", "--count", "3", "--seam-mask", "1", "--seed", "ab" * 32, "--library", lib
    )
    assert r.returncode == 0, r.stderr
    # a merge brings spent rows of another machine's board: two unspent solutions of n = 10 leave the stock
    conn = sqlite3.connect(lib)
    free = [own_hash(from_blob(bytes(s), 10)) for (s,) in conn.execute("SELECT solution FROM tiles WHERE n = 10")]
    gone = sorted(set(free) - {s for (s,) in conn.execute("SELECT solution FROM spent")})[:2]
    assert len(gone) == 2
    conn.executemany(
        "INSERT INTO spent (solution, board, n, day, created) VALUES (?, ?, 10, '2026-09-30', 0)",
        [(s, "f" * 64) for s in gone],
    )
    conn.commit()
    conn.close()
    rep = _report(lib)
    assert rep["load"]["source"] == "refresh" and rep["load"]["rows_read"] == 3 + 2
    assert _counts_of(rep) == _counts_of(_report(lib, cached=False)) == _own_count(lib)
    assert rep["per_n"]["10"]["per_class"]["one"] >= 1


def test_a_cache_of_another_library_or_a_damaged_one_is_not_trusted(nights, tmp_path):
    lib = tmp_path / "lib.sqlite"
    shutil.copy(nights["lib"], lib)
    side = Path(str(lib) + stock.SUFFIX)
    shutil.copy(str(nights["lib"]) + stock.SUFFIX, side)
    conn = sqlite3.connect(lib)
    conn.execute("UPDATE meta SET value = 'another' WHERE key = 'library_id'")
    conn.commit()
    conn.close()
    assert _report(lib)["load"]["source"] == "scan"  # and the cache is rewritten for this file
    assert _report(lib)["load"]["source"] == "cache"
    side.write_bytes(b"not an npz")
    rep = _report(lib)
    assert rep["load"]["source"] == "scan" and _counts_of(rep) == _own_count(lib)


def test_the_night_records_never_enter_a_snapshot(nights, tmp_path):
    from remote.snapshot import strip_state

    lib = tmp_path / "lib.sqlite"
    shutil.copy(nights["lib"], lib)
    conn = sqlite3.connect(lib)
    assert conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'stock:%'").fetchone()[0] == 2
    strip_state(conn)
    assert conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'stock:%'").fetchone()[0] == 0
    conn.close()


def test_the_command_prints_the_stock_and_refuses_a_missing_library(nights, tmp_path):
    lib = nights["lib"]
    r = run_tiles("library", "stock", "--library", lib)
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()
    assert [x.split(":")[0] for x in rows[:4]] == ["n=10", "n=12", "n=14", "n=16"]
    assert rows[-1].startswith("rate over 2 night(s) (2026-10-01 .. 2026-10-02)")
    j = run_tiles("library", "stock", "--library", lib, "--json")
    assert _counts_of(json.loads(j.stdout)) == _own_count(lib)
    bad = run_tiles("library", "stock", "--library", tmp_path / "none.sqlite")
    assert bad.returncode == 3 and bad.stderr.count("\n") == 1 and "no tile library" in bad.stderr, bad.stderr
    assert not (tmp_path / "none.sqlite").exists()


@given(mask=st.integers(0, 15), t=st.integers(0, 15))
def test_an_edge_class_is_the_masks_shape_and_the_same_in_every_orientation(mask, t):
    from tilelib.symmetry import side_map

    sm = side_map(t)
    image = sum(1 << sm[b] for b in range(4) if mask >> b & 1)
    assert stock.CLASSES[stock.edge_class(mask)] == _own_shape(mask) == _own_shape(image)
    assert stock.edge_class(image) == stock.edge_class(mask)


@given(steps=st.lists(st.tuples(st.booleans(), st.lists(st.integers(0, 40), max_size=30)), max_size=8))
def test_rows_and_spent_keys_merged_in_any_order_count_as_a_brute_force_count(steps):
    """The cache's sorted merges (``_add_rows``, ``_add_spent``) against counting from scratch: keys
    drawn from a small range so rows share solutions and spent keys name rows added before or after."""
    import numpy as np

    s = stock.StockSet.empty()
    rows, spent = [], set()
    for is_spent, ks in steps:
        keys = [bytes([k]) * 16 for k in ks]
        if is_spent:
            spent |= set(keys)
            stock._add_spent(s, np.array(keys, stock._KEY))
        elif keys:
            rows += [(k, k[0] % 6) for k in keys]
            stock._add_rows(s, 10, np.array(keys, stock._KEY), np.array([k[0] % 6 for k in keys], np.uint8))
    c = stock.counts(s)[10]
    free = [(k, cl) for k, cl in rows if k not in spent]
    assert (c["rows"], c["unspent"], c["solutions"]) == (len(rows), len(free), len({k for k, _ in free}))
    assert {k: v for k, v in c["per_class"].items() if v} == {
        stock.CLASSES[cl]: sum(1 for _k, x in free if x == cl) for cl in {x for _k, x in free}
    }
