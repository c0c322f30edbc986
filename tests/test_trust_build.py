"""Issue 11, families 3 and 4: the build refuses a damaged library, retries its own push, and every
board replays from its seed and start snapshot — so every tampered choice is caught.

Boards are G=61 (about 5 s to build) on a file:// remote; the replay family builds one board per
module and tampers with copies of its manifest.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_support import run_tiles

from daily.build import BuildOptions, build
from daily.replay import ReplayImpossible, first_difference, replay
from referee.board import CheckFailed
from referee.manifest import from_json, load
from remote.backend import open_backend
from tilelib import ledger
from tilelib.errors import CorruptLibrary, RemoteError, exit_code
from tilelib.store import Library

SEED = bytes.fromhex("5eed" * 16)
SEED_HEX = SEED.hex()
DAY = "2026-11-20"


cli = run_tiles


def run(lib: Path, out: Path, remote: str | None, day: str = DAY, size: int = 61, **kw):
    logs: list[str] = []
    res = build(
        BuildOptions(day=day, library=lib, out_dir=out, size=size, seed=SEED, remote=remote, **kw), log=logs.append
    )
    return res, logs


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Two consecutive days on one library with a file:// remote; the second starts from the first's push."""
    root = tmp_path_factory.mktemp("replay")
    (root / "remote").mkdir()
    url = f"file://{root / 'remote'}"
    lib, out = root / "lib.sqlite", root / "out"
    first, _ = run(lib, out, url, day="2026-11-19")
    second, logs = run(lib, out, url)
    return {"root": root, "url": url, "lib": lib, "out": out, "first": first, "second": second, "logs": logs}


def tampered(built, tmp_path, change) -> Path:
    d = json.loads(built["second"].manifest_path.read_text())
    change(d)
    p = tmp_path / "tampered.json"
    p.write_text(from_json(d).to_json())
    return p


# ---------------------------------------------------------------- replay


def test_manifest_records_the_start_snapshot_and_versions(built):
    m1, m2 = load(built["first"].manifest_path), load(built["second"].manifest_path)
    assert m1.build["snapshot"] and m2.build["snapshot"]
    assert set(m2.build["versions"]) == {"tiles", "generator", "ortools", "python"}
    # day 2 started from the state day 1's push left: the same base, one delta (day 1's rows) more
    head = json.loads(open_backend(built["url"]).get_head().body)
    deltas = [d["sha"] for d in head["deltas"]]
    assert m2.build["snapshot"] == m1.build["snapshot"] == head["snapshot"]
    assert m2.build["deltas"] == deltas[:-1] and m1.build["deltas"] == deltas[:-2] and len(deltas) >= 2


def test_the_recorded_tiles_version_is_this_distribution():
    """build.versions["tiles"] is the installed version of pyproject's [project] name (not "tiles",
    a different project on PyPI), so it never degrades to "unknown"."""
    import tomllib
    from importlib import metadata

    from daily.provenance import DISTRIBUTION, versions

    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION and project["scripts"]["tiles"] == "tiles_cli.app:main"
    assert versions()["tiles"] == metadata.version(DISTRIBUTION) == project["version"]


@pytest.mark.slow
def test_both_days_replay_byte_for_byte(built):
    for res in (built["first"], built["second"]):
        rep = replay(load(res.manifest_path), SEED, built["url"])
        assert rep.snapshot == load(res.manifest_path).build["snapshot"]


@pytest.mark.slow
def test_a_replay_checks_its_start_state_once(built, monkeypatch):
    """The start state is proven part by part as it is fetched; the rebuild's own check then audits
    no row and parses no manifest again (the library made large for the check, so no full check is
    run for being small), and the board is still the same byte for byte."""
    monkeypatch.setattr("trust.checks.FULL_CHECK_MAX_ROWS", 0)
    lines: list[str] = []
    res = built["second"]
    rep = replay(load(res.manifest_path), SEED, built["url"], log=lines.append)
    assert rep.snapshot == load(res.manifest_path).build["snapshot"]
    checked = [x for x in lines if "check ok" in x]
    assert checked and all(" 0 of " in x and " 0 manifest(s) " in x for x in checked), checked


def test_mark_proven_reaches_where_a_full_check_reaches(built, tmp_path):
    """``mark_proven`` records the same reach a full check of the file would (every table's last
    rowid), and a row changed after it still makes the next check a full one."""
    from trust import checks

    copy = tmp_path / "lib.sqlite"
    with Library.open(built["lib"]) as lib:
        lib.conn.execute("VACUUM INTO ?", (str(copy),))
    with Library.open(copy) as lib:
        full = checks.check_connection(lib.conn, "lib", integrity="quick")
        checks.mark_proven(lib)
        assert checks.read_watermark(lib) == full.reached != checks.NOTHING
        lib.conn.execute("UPDATE tiles SET n = n WHERE rowid = 1")
        assert checks.read_watermark(lib) == checks.NOTHING


@pytest.mark.slow
def test_prune_keeps_every_state_a_stored_day_replays_from(tmp_path):
    """The weekly prune (``tiles library snapshots --prune-keep 0 --min-age 0``, the harshest) after
    two compactions: the first day's start snapshot is neither HEAD's base nor its parent, so only
    the stored day's need keeps it; the pruner is another host (its library is pulled first). What
    no day names goes; the day still replays byte for byte."""
    from remote_support import add_tiles

    from remote.sync import push

    (tmp_path / "remote").mkdir()
    url = f"file://{tmp_path / 'remote'}"
    lib = tmp_path / "lib.sqlite"
    first, _ = run(lib, tmp_path / "out", url, size=31)
    start = load(first.manifest_path).build["snapshot"]
    for k in range(2):
        add_tiles(lib, 100 + k, 2)
        push(lib, open_backend(url), compact=True)
    head = json.loads(open_backend(url).get_head().body)
    assert start not in (head["snapshot"], head["parent"])
    before = {s.sha for s in open_backend(url).list_snapshots()}
    r = cli(
        "library", "snapshots", "--prune-keep", "0", "--min-age", "0", "--remote", url,
        "--library", str(tmp_path / "pruner.sqlite"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    after = {s.sha for s in open_backend(url).list_snapshots()}
    assert start in after and len(before - after) == 1  # the first day's own delta: no day started from it
    assert "kept 3 (1 of them named by a stored day's start state)" in r.stdout
    assert replay(load(first.manifest_path), SEED, url).snapshot == start


def _inner_cell(built) -> list[int]:
    """A board cell inside exactly one tile window that is not given: a legal extra clue."""
    from referee import gate

    m = load(built["second"].manifest_path)
    with Library.open(built["lib"]) as lib:
        b = gate.admit_board(m, lib)
    r, c = next((r, c) for r in range(b.G) for c in range(b.G) if b.owners[r, c] == 1 and not b.givens[r, c])
    return [int(r), int(c)]


@pytest.mark.slow
@pytest.mark.parametrize("what", ["extra clue", "stitch stats"])
def test_a_tampered_choice_that_verify_accepts_fails_the_replay(built, tmp_path, what):
    if what == "extra clue":
        cell = _inner_cell(built)

        def change(d):  # a careful forger keeps the stated stats consistent
            d["clues"].append(cell)
            d["stats"]["clues"] += 1

        words = f"clue {cell}"
    else:
        change, words = (
            lambda d: d["stats"]["stitch"].update(drained=d["stats"]["stitch"]["drained"] + 1),
            "stats.stitch",
        )
    p = tampered(built, tmp_path, change)
    env = {"TILES_LIBRARY": str(built["lib"]), "TILES_REMOTE": built["url"]}
    ok = cli("referee", "verify", str(p), "--seed", SEED_HEX, env=env)
    assert ok.returncode == 0, ok.stderr  # the board is still sound: only the replay can tell
    r = cli("referee", "verify", str(p), "--seed", SEED_HEX, "--replay", env=env)
    assert r.returncode == 5, r.stderr
    assert "replay:" in r.stderr and words in r.stderr and "Traceback" not in r.stderr


def test_first_difference_names_the_first_tile(built):
    m = load(built["second"].manifest_path)
    d = json.loads(m.to_json())
    d["tiles"][7]["t"] = (d["tiles"][7]["t"] + 4) % 16
    d["tiles"][9]["hash"] = d["tiles"][10]["hash"]
    why = first_difference(m, from_json(d))
    assert why.startswith("tile 7:") and "t=" in why
    assert first_difference(m, m) is None


def test_seed_tile_moved_fails_with_the_seed(built, tmp_path):
    """Moved to another tile a player could start from (so the tile-by-tile closure, which runs
    first, does not object), the seed tile is caught by the seed check."""
    from dataclasses import replace

    from referee import closure
    from referee.board import build_board
    from tilelib.store import Library

    m = load(built["second"].manifest_path)
    with Library.open(built["lib"]) as lib:
        board = build_board(m, lib)
    seed = json.loads(m.to_json())["seed_tile"]
    to = next(
        (i for i in range(m.tile_count()) if i != seed and closure.closure(replace(board, seed_tile=i)).complete), None
    )
    assert to is not None, "no other tile to start from"

    def move(d):
        d["seed_tile"] = to

    p = tampered(built, tmp_path, move)
    env = {"TILES_LIBRARY": str(built["lib"])}
    r = cli("referee", "verify", str(p), "--seed", SEED_HEX, env=env)
    assert r.returncode == 5 and "seed" in r.stderr


def test_replay_is_impossible_with_other_versions_or_no_snapshot(built, tmp_path):
    m = load(built["second"].manifest_path)
    d = json.loads(m.to_json())
    d["build"]["versions"]["ortools"] = "0.0.1"
    with pytest.raises(ReplayImpossible, match="ortools '0.0.1'"):
        replay(from_json(d), SEED, built["url"])
    d["build"] = {"snapshot": None, "versions": m.build["versions"]}
    with pytest.raises(ReplayImpossible, match="no start snapshot"):
        replay(from_json(d), SEED, built["url"])
    with pytest.raises(ReplayImpossible, match="needs the remote"):
        replay(m, SEED, None)


def test_a_day_built_by_an_older_generator_says_plainly_why_it_cannot_be_replayed(built, tmp_path):
    """GENERATOR_VERSION 5 decides completions in C (other grids than version 4's CP-SAT): a day
    built under 4 is refused before anything is fetched, naming both versions, on the CLI too."""
    from generator.version import GENERATOR_VERSION

    m = load(built["second"].manifest_path)
    d = json.loads(m.to_json())
    d["build"]["versions"]["generator"] = 4
    with pytest.raises(ReplayImpossible, match=f"generator 4 \\(here {GENERATOR_VERSION}\\)"):
        replay(from_json(d), SEED, built["url"])
    old = tmp_path / "old.json"
    old.write_text(json.dumps(d))
    r = cli(
        "referee",
        "verify",
        str(old),
        "--seed",
        SEED_HEX,
        "--replay",
        "--remote",
        built["url"],
        env={"TILES_LIBRARY": str(built["lib"])},
    )
    assert r.returncode != 0 and r.stderr.count("\n") == 1
    assert f"replay impossible here: the build ran with generator 4 (here {GENERATOR_VERSION})" in r.stderr


def test_replay_needs_the_seed_on_the_cli(built):
    r = cli(
        "referee", "verify", str(built["second"].manifest_path), "--replay", env={"TILES_LIBRARY": str(built["lib"])}
    )
    assert r.returncode == 2 and "--replay needs --seed" in r.stderr


def test_a_manifest_naming_a_tile_the_library_lacks_says_pull(built, tmp_path):
    empty = tmp_path / "empty.sqlite"
    Library.create(empty).close()
    r = cli("referee", "verify", str(built["second"].manifest_path), env={"TILES_LIBRARY": str(empty)})
    assert r.returncode == 3 and "out of date" in r.stderr and "pull" in r.stderr


# ---------------------------------------------------------------- damaged libraries


def test_build_refuses_a_zero_length_library(tmp_path):
    lib = tmp_path / "lib.sqlite"
    lib.touch()
    with pytest.raises(CorruptLibrary, match="empty"):
        run(lib, tmp_path / "out", None, size=21)
    assert lib.stat().st_size == 0 and not (tmp_path / "out").exists()


def test_build_refuses_a_tampered_row_before_packing(tmp_path):
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    run(lib, out, None, size=21)
    with sqlite3.connect(lib) as c:
        c.execute("UPDATE tiles SET givens = zeroblob(length(givens)) WHERE rowid = 1")
    r = cli(
        "daily",
        "build",
        "--date",
        "2026-11-21",
        "--size",
        "21",
        "--seed",
        SEED_HEX,
        "--library",
        str(lib),
        "--out",
        str(out),
    )
    assert r.returncode == 3, r.stderr
    assert "row 1" in r.stderr and "pack" not in r.stderr
    assert not (out / "2026-11-21.json").exists()


def test_build_refuses_a_damaged_stored_manifest(tmp_path):
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    run(lib, out, None, size=21)
    with sqlite3.connect(lib) as c:
        c.execute("UPDATE manifests SET json = substr(json, 1, 100) || zeroblob(50)")
    r = cli(
        "daily",
        "build",
        "--date",
        "2026-11-21",
        "--size",
        "21",
        "--seed",
        SEED_HEX,
        "--library",
        str(lib),
        "--out",
        str(out),
    )
    assert r.returncode == 3 and DAY[:8] in r.stderr and "manifest" in r.stderr
    for args in (["library", "verify"], ["daily", "render", "--date", DAY, "--png", str(tmp_path / "x.png")]):
        r = cli(*args, "--library", str(lib))
        assert r.returncode in (3, 5) and "Traceback" not in r.stderr and "manifest" in (r.stdout + r.stderr)


def test_stats_says_a_malformed_file_is_damaged(tmp_path):
    from test_trust_remote import flip_page_header

    lib = tmp_path / "lib.sqlite"
    run(lib, tmp_path / "out", None, size=41)
    flip_page_header(lib)
    r = cli("library", "stats", "--library", str(lib))
    assert r.returncode == 3 and "damaged" in r.stderr


def test_bad_packer_or_params_create_no_library(tmp_path):
    lib = tmp_path / "sub" / "lib.sqlite"
    for extra in (["--packer", "nope"], ["--params", '{"bogus": 1}'], ["--params", "[1]"]):
        r = cli(
            "daily",
            "build",
            "--date",
            DAY,
            "--size",
            "21",
            "--seed",
            SEED_HEX,
            "--library",
            str(lib),
            "--out",
            str(tmp_path / "out"),
            *extra,
        )
        assert r.returncode == 2, (extra, r.stderr)
    assert not lib.exists() and not lib.parent.exists()


# ---------------------------------------------------------------- the build retries its own push


def test_a_failed_push_is_retried_by_the_next_run(tmp_path, monkeypatch):
    import remote.sync as sync

    (tmp_path / "remote").mkdir()
    url = f"file://{tmp_path / 'remote'}"
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    real_push, calls = sync.push, []

    def flaky(*a, **kw):
        calls.append(1)
        if len(calls) == 2:  # the push after the build (the first publishes the start)
            raise RemoteError("remote: connection reset (injected)")
        return real_push(*a, **kw)

    monkeypatch.setattr(sync, "push", flaky)
    with pytest.raises(RemoteError):
        run(lib, out, url, size=21)
    st = sync.status(lib, open_backend(url))
    assert st.ahead_manifests == 1 and st.ahead_tiles > 0 and "ahead of remote" in st.line()
    (out / f"{DAY}.json").unlink()  # and the manifest file got lost too
    res, logs = run(lib, out, url, size=21)
    assert res.skipped and (out / f"{DAY}.json").is_file()
    assert any("rewritten" in line for line in logs) and any(line.startswith("push") for line in logs)
    st = sync.status(lib, open_backend(url))
    assert (st.ahead_tiles, st.ahead_manifests, st.behind) == (0, 0, False)
    fresh = tmp_path / "fresh.sqlite"
    sync.pull(fresh, open_backend(url))
    with Library.open(fresh) as f:
        assert ledger.get_manifest(f.conn, DAY) == (out / f"{DAY}.json").read_text()


def test_exit_code_of_a_damaged_library_is_3():
    assert exit_code(CorruptLibrary("x")) == 3 and exit_code(CheckFailed("replay", "x")) == 5
