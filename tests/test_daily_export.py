"""`tiles daily export` (``daily.export``): past days as Parquet. Two real G=61 days in one library,
built by `tiles daily build` (one from an explicit seed, one from TILES_SECRET); the round trip — every
exported tile's solution is the board the verifier rebuilds, its puzzle is that solution with cells
hidden and is the service's start view, its neighbours are the judge's, its wave the closure's —;
the files read in pyarrow and pandas as they are; a day not over is refused in one line, nothing
written."""

from __future__ import annotations

import datetime as dt
import sqlite3

import httpx
import independent_verifier as iv
import pytest
from cli_support import run_tiles
from needs import need_module
from serve_support import serving

from daily.build import BuildOptions, build
from daily.export import DAYS_FILE, TILES_FILE, export_days
from referee.board import build_board
from referee.closure import closure
from referee.judge import seam_neighbours
from referee.manifest import from_json
from tilelib.errors import BadInput
from tilelib.store import Library

pa = need_module("pyarrow", "pyarrow is a dependency")
pq = need_module("pyarrow.parquet", "pyarrow is a dependency")
pd = need_module("pandas", "pandas is a test extra")

DAYS = ("2026-11-20", "2026-11-21")
SECRET = "export-test-secret"
TODAY = dt.date(2026, 12, 5)
FUTURE = (dt.datetime.now(dt.UTC).date() + dt.timedelta(days=30)).isoformat()  # not over by any clock


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    lib = d / "lib.sqlite"
    build(
        BuildOptions(day=DAYS[0], library=lib, out_dir=d, size=61, seed=bytes.fromhex("e1" * 32)), log=lambda _l: None
    )
    build(BuildOptions(day=DAYS[1], library=lib, out_dir=d, size=61, secret=SECRET), log=lambda _l: None)
    build(BuildOptions(day=FUTURE, library=lib, out_dir=d, size=61, seed=bytes.fromhex("e2" * 32)), log=lambda _l: None)
    return lib


def kind(t) -> str:
    """A column's type as FORMAT writes it (a list's item name differs between pyarrow versions)."""
    return f"list<{t.value_type}>" if pa.types.is_list(t) else str(t)


def test_the_round_trip_is_the_verifiers_board(library, tmp_path):
    with Library.open(library) as lib:
        rep = export_days(lib, "2026-11-01", "2026-11-30", tmp_path, secret=SECRET, today=TODAY)
        manifests = {
            d: from_json(lib.conn.execute("SELECT json FROM manifests WHERE day = ?", (d,)).fetchone()[0]) for d in DAYS
        }
        boards = {d: build_board(m, lib) for d, m in manifests.items()}
    assert rep.days == list(DAYS) and rep.seeds == 1 and "exported 2 day(s)" in rep.line()
    tiles = pq.read_table(tmp_path / TILES_FILE)
    days = pq.read_table(tmp_path / DAYS_FILE).to_pylist()
    assert [(f.name, kind(f.type)) for f in tiles.schema] == [  # FORMAT §15, column by column
        ("day", "string"),
        ("tile", "int32"),
        ("n", "int32"),
        ("y0", "int32"),
        ("x0", "int32"),
        ("neighbours", "list<int32>"),
        ("seed", "bool"),
        ("puzzle", "string"),
        ("solution", "string"),
        ("wave", "int32"),
        ("ladder", "int32"),
        ("m", "int32"),
        ("blank", "double"),
    ]
    assert [(f.name, kind(f.type)) for f in pq.read_schema(tmp_path / DAYS_FILE)] == [
        ("day", "string"),
        ("G", "int32"),
        ("tiles", "int32"),
        ("seed", "string"),
        ("seed_commit", "string"),
        ("packer", "string"),
        ("code", "string"),
        ("reward_total", "int64"),
        ("waves", "int32"),
    ]
    assert tiles.num_rows == rep.tiles
    assert [d["day"] for d in days] == list(DAYS)
    for row in tiles.to_pylist():
        board = boards[row["day"]]
        x0, y0, s = board.squares[row["tile"]]
        n = s + 1
        assert (row["n"], row["y0"], row["x0"]) == (n, y0, x0)
        truth = "".join("01"[v] for v in board.tile_solution(row["tile"]).ravel())
        assert row["solution"] == truth  # the verifier's board
        assert len(row["puzzle"]) == n * n and "." in row["puzzle"]
        assert all(p in (".", t) for p, t in zip(row["puzzle"], truth, strict=True))  # the solution with cells hidden
        assert row["seed"] == (row["tile"] == board.seed_tile)
        # the difficulty columns: the library row the manifest's hash names, read by SQL
        digest = manifests[row["day"]].hashes[row["tile"]]
        with sqlite3.connect(library) as conn:
            stored = conn.execute("SELECT ladder, m, blank, givens FROM tiles WHERE hash = ?", (digest,)).fetchone()
        assert (row["ladder"], row["m"], row["blank"]) == stored[:3] and 0 <= row["ladder"] <= 5 and row["m"] >= 1
        given = sum(bin(b).count("1") for b in stored[3])
        assert row["blank"] == pytest.approx(1 - given / n**2)  # FORMAT §4's definition
    for day, board in boards.items():
        rows = [r for r in tiles.to_pylist() if r["day"] == day]
        nbrs, waves = seam_neighbours(board.squares), closure(board).wave
        assert [r["tile"] for r in rows] == list(range(len(board.squares)))
        assert all(set(r["neighbours"]) == nbrs[r["tile"]] and r["wave"] == waves[r["tile"]] >= 1 for r in rows)
        drow = next(d for d in days if d["day"] == day)
        assert drow["G"] == board.G and drow["tiles"] == len(rows) and drow["waves"] == max(waves)
        assert drow["reward_total"] == sum(r["n"] ** 2 for r in rows)
        assert drow["seed_commit"] == manifests[day].seed_commit and drow["packer"] == manifests[day].packing.name
    from daily.seed import day_seed
    from tilelib.days import seed_commit

    revealed = {d["day"]: d["seed"] for d in days}
    assert revealed[DAYS[0]] is None  # built from a seed the secret is not
    assert seed_commit(bytes.fromhex(revealed[DAYS[1]])) == manifests[DAYS[1]].seed_commit
    assert revealed[DAYS[1]] == day_seed(SECRET, DAYS[1]).hex()


def test_start_views_are_what_the_service_shows_and_waves_an_independent_closure(library, tmp_path):
    """Each exported puzzle is, cell for cell, the definition's start view computed apart from the
    project (tests/independent_verifier.py: the board's givens, zone cells and clues shown, the rest
    hidden) and the service's answer to a player asking for the tile; each wave is that verifier's
    own closure (its own enumeration, not ``referee.closure``)."""
    with Library.open(library) as lib:
        export_days(lib, DAYS[0], DAYS[1], tmp_path, today=TODAY)
    rows = pq.read_table(tmp_path / TILES_FILE).to_pylist()
    manifests = [library.parent / f"{d}.json" for d in DAYS]
    conn = sqlite3.connect(library)
    try:
        with serving(library, tmp_path / "runs.sqlite", manifests) as base:
            for day, path in zip(DAYS, manifests, strict=True):
                mf = iv.parse_manifest(path.read_text("utf-8"))
                val, _owners, giv = iv.assemble(mf, iv.load_tiles(mf, conn))
                wave, _seams = iv.closure_waves(mf, val, giv)
                mine = [r for r in rows if r["day"] == day]
                assert [r["tile"] for r in mine] == list(range(len(mf["squares"])))
                G, hidden = mf["G"], 0
                for r in mine:
                    x0, y0, s = mf["squares"][r["tile"]]
                    cells = [(y0 + i) * G + x0 + j for i in range(s + 1) for j in range(s + 1)]
                    start = "".join(str(val[p]) if giv[p] else "." for p in cells)
                    assert r["puzzle"] == start, (day, r["tile"])
                    assert r["wave"] == wave[r["tile"]] >= 1, (day, r["tile"])
                    served = httpx.get(f"{base}/api/v1/days/{day}/tiles/{r['tile']}")
                    assert served.status_code == 200 and served.json()["puzzle"] == r["puzzle"], (day, r["tile"])
                    hidden += start.count(".")
                assert 0 < hidden < sum(len(r["puzzle"]) for r in mine)  # neither all shown nor all hidden
                assert len({r["wave"] for r in mine}) > 2  # the waves tell tiles apart
    finally:
        conn.close()


def test_the_files_load_in_pandas_as_they_are(library, tmp_path):
    with Library.open(library) as lib:
        export_days(lib, DAYS[0], DAYS[0], tmp_path, today=TODAY)
    tiles = pd.read_parquet(tmp_path / TILES_FILE)
    days = pd.read_parquet(tmp_path / DAYS_FILE)
    assert list(days["day"]) == [DAYS[0]] and days["seed"].isna().all()
    assert len(tiles) == int(days["tiles"][0]) and (tiles["n"] ** 2 == tiles["solution"].str.len()).all()
    assert tiles["wave"].min() == 1 and list(tiles["neighbours"][0]) == sorted(tiles["neighbours"][0])


def test_a_day_not_over_is_refused_and_nothing_is_written(library, tmp_path):
    with Library.open(library) as lib:
        with pytest.raises(BadInput) as e:
            export_days(lib, DAYS[0], DAYS[1], tmp_path, today=dt.date(2026, 11, 21))
        with pytest.raises(BadInput, match="holds no day"):
            export_days(lib, "2025-01-01", "2025-01-31", tmp_path, today=TODAY)
        with pytest.raises(BadInput, match="is after"):
            export_days(lib, DAYS[1], DAYS[0], tmp_path, today=TODAY)
    assert str(e.value) == (
        "2026-11-21 is not over (UTC today is 2026-11-21): its solutions are secret until then; export up to 2026-11-20"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_report_line_and_the_code_column_say_what_was_written(library, tmp_path):
    import json

    from daily.export import ExportReport

    with Library.open(library) as lib:
        rep = export_days(lib, DAYS[0], DAYS[1], tmp_path, secret=SECRET, today=TODAY)
        stored = {
            d: json.loads(lib.conn.execute("SELECT json FROM manifests WHERE day = ?", (d,)).fetchone()[0])
            for d in DAYS
        }
    assert rep.line() == (
        f"exported 2 day(s) ({DAYS[0]}..{DAYS[1]}), {rep.tiles} tiles, 1 seed(s) revealed "
        f"-> {tmp_path / DAYS_FILE}, {tmp_path / TILES_FILE}"
    )
    assert rep.tiles == pq.read_table(tmp_path / TILES_FILE).num_rows > 50
    one = ExportReport(tmp_path, [DAYS[0], DAYS[1], "2026-11-22"])
    assert one.line().startswith("exported 3 day(s) (2026-11-20..2026-11-22), ")
    assert ExportReport(tmp_path, []).line().startswith("exported 0 day(s) (no day), ")
    days = pq.read_table(tmp_path / DAYS_FILE).to_pylist()
    for row in days:
        versions = stored[row["day"]]["build"]["versions"]
        assert row["code"] == json.dumps(versions, sort_keys=True) and versions  # FORMAT §15: build.versions


def test_the_command(library, tmp_path):
    out = tmp_path / "data"
    r = run_tiles(
        "daily", "export", "--from", DAYS[0], "--to", DAYS[1], "--out", out, "-L", library, env={"TILES_SECRET": SECRET}
    )
    assert r.returncode == 0, r.stderr
    assert "exported 2 day(s)" in r.stdout and (out / TILES_FILE).exists() and (out / DAYS_FILE).exists()
    late = run_tiles("daily", "export", "--from", DAYS[0], "--to", FUTURE, "--out", tmp_path / "x", "-L", library)
    assert late.returncode == 2 and f"{FUTURE} is not over" in late.stderr
    assert len(late.stderr.strip().splitlines()) == 1 and not (tmp_path / "x").exists()
    planted = tmp_path / "a-file"
    planted.write_text("mine")
    onto = run_tiles("daily", "export", "--from", DAYS[0], "--to", DAYS[1], "--out", planted, "-L", library)
    assert onto.returncode == 2 and "is a file, not a directory" in onto.stderr
    assert len(onto.stderr.strip().splitlines()) == 1 and planted.read_text() == "mine"
    bad = run_tiles("daily", "export", "--from", "2026-13-01", "--to", DAYS[1], "--out", tmp_path / "y", "-L", library)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--from" in bad.stderr


def test_an_out_that_cannot_be_a_folder_is_refused_naming_the_option(library, tmp_path):
    """An --out that is a file, or lies under one, is refused in one line that names the option the
    user typed (``--out``) and the path, before anything is written."""
    planted = tmp_path / "a-file"
    planted.write_text("mine")
    with Library.open(library) as lib:
        with pytest.raises(BadInput) as onto:
            export_days(lib, DAYS[0], DAYS[1], planted, today=TODAY)
        with pytest.raises(BadInput) as under:
            export_days(lib, DAYS[0], DAYS[1], planted / "data", today=TODAY)
    assert str(onto.value) == f"--out {planted} is a file, not a directory"
    assert str(under.value) == f"--out {planted / 'data'} is under {planted}, which is a file"
    assert planted.read_text() == "mine" and [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_missing_out_folders_are_made_and_both_files_are_zstd(library, tmp_path, monkeypatch):
    """An --out whose parent folders do not exist yet is made, folders and all; the export writes its
    two files there and nothing else (no runs database, no stray temporary file, even in the working
    directory); every column chunk of both files is compressed with zstd."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "a" / "b" / "data"
    with Library.open(library) as lib:
        export_days(lib, DAYS[0], DAYS[0], out, today=TODAY)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "a",
        "a/b",
        "a/b/data",
        f"a/b/data/{DAYS_FILE}",
        f"a/b/data/{TILES_FILE}",
    ]
    for name in (DAYS_FILE, TILES_FILE):
        meta = pq.ParquetFile(out / name).metadata
        chunks = [meta.row_group(g).column(c) for g in range(meta.num_row_groups) for c in range(meta.num_columns)]
        assert chunks and {c.compression for c in chunks} == {"ZSTD"}, name


def test_without_today_a_day_is_over_by_the_utc_date_not_the_machines(library, tmp_path, monkeypatch):
    """Left out, ``today`` is the UTC date: at 23:30 UTC on 2026-11-21 a machine whose zone is UTC+14
    already reads 2026-11-22 locally, yet 2026-11-21 is still refused (its solutions stay secret) while
    2026-11-20 is exported. The module's clock is replaced by one fixed instant: no wall clock."""
    import types

    import daily.export

    instant = dt.datetime(2026, 11, 21, 23, 30, tzinfo=dt.UTC)
    machine_zone = dt.timezone(dt.timedelta(hours=14))

    class Clock(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            """As ``datetime.now``: aware in ``tz`` when given, else the machine's naive local time."""
            return instant.astimezone(tz) if tz is not None else instant.astimezone(machine_zone).replace(tzinfo=None)

    fake = types.ModuleType("datetime")
    fake.__dict__.update(vars(dt))
    fake.datetime = Clock
    monkeypatch.setattr(daily.export, "dt", fake)
    assert Clock.now().date() == dt.date(2026, 11, 22) and Clock.now(dt.UTC).date() == dt.date(2026, 11, 21)
    with Library.open(library) as lib:
        with pytest.raises(BadInput) as e:
            export_days(lib, DAYS[0], DAYS[1], tmp_path / "late")
        rep = export_days(lib, DAYS[0], DAYS[0], tmp_path / "out")
    assert str(e.value) == (
        "2026-11-21 is not over (UTC today is 2026-11-21): its solutions are secret until then; export up to 2026-11-20"
    )
    assert rep.days == [DAYS[0]] and not (tmp_path / "late").exists()


def test_the_code_column_sorts_the_versions_keys_and_is_null_without_build(library, tmp_path):
    """``code`` is the manifest's build.versions as JSON with its keys sorted, whatever order the
    manifest lists them in (so equal versions are equal text), and null for a manifest that has no
    ``build`` (one written before FORMAT §13). Both manifests are edited in a copy of the library."""
    import json

    copy = tmp_path / "lib.sqlite"
    src, dst = sqlite3.connect(library), sqlite3.connect(copy)
    try:
        src.backup(dst)
        for day in DAYS:
            obj = json.loads(dst.execute("SELECT json FROM manifests WHERE day = ?", (day,)).fetchone()[0])
            if day == DAYS[0]:
                del obj["build"]
            else:
                obj["build"]["versions"] = {"tiles": "9.9", "python": "3.12", "generator": 3}  # not in key order
            dst.execute("UPDATE manifests SET json = ? WHERE day = ?", (json.dumps(obj), day))
        dst.commit()
    finally:
        src.close()
        dst.close()
    with Library.open(copy) as lib:
        export_days(lib, DAYS[0], DAYS[1], tmp_path / "out", today=TODAY)
    code = {r["day"]: r["code"] for r in pq.read_table(tmp_path / "out" / DAYS_FILE).to_pylist()}
    assert code == {DAYS[0]: None, DAYS[1]: '{"generator": 3, "python": "3.12", "tiles": "9.9"}'}
