"""Issue 51: a library trusts no one's schema.

Each class of hostile schema a peer can plant — a trigger on ``tiles``, on ``spent``, on
``manifests``; a view shadowing ``tiles``; a changed and a dropped index; an extra table — is tried
against real files and a real remote (a local directory and the S3 server on loopback): push
refuses and leaves the remote untouched; a fresh pull of a remote whose HEAD carries it heals to the
sound snapshot before it (the shipped schema) and then takes new rows; ``library verify`` names the
object (exit 3); ``library repair`` recovers every row that verifies and ``generate`` then adds rows.
The library is a real one: a G=21 day built once per module (tiles, a manifest, its spent rows).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_support import run_tiles
from s3_server import moto, remote_url, s3_env  # noqa: F401  (fixtures)

from daily.build import BuildOptions, build
from remote.backend import SNAPSHOT_DIR, open_backend
from remote.sync import pull, push
from tilelib.schema import schema_problems

SEED = bytes.fromhex("5c4e" * 16)
DAY = "2026-11-21"

# name -> (statements a hostile peer runs, the phrase that names the object)
HOSTILE = {
    "trigger on tiles": (
        ["CREATE TRIGGER drop_tiles BEFORE INSERT ON tiles BEGIN SELECT RAISE(IGNORE); END"],
        'extra trigger "drop_tiles" on tiles',
    ),
    "trigger on spent": (
        ["CREATE TRIGGER drop_spent BEFORE INSERT ON spent BEGIN SELECT RAISE(IGNORE); END"],
        'extra trigger "drop_spent" on spent',
    ),
    "trigger on manifests": (
        [
            "CREATE TRIGGER bump AFTER INSERT ON manifests BEGIN "
            "UPDATE meta SET value = '99' WHERE key = 'schema_version'; END"
        ],
        'extra trigger "bump" on manifests',
    ),
    "view shadowing tiles": (
        [
            "ALTER TABLE tiles RENAME TO tiles_kept",
            "CREATE VIEW tiles AS SELECT * FROM tiles_kept",
            "CREATE TRIGGER swallow INSTEAD OF INSERT ON tiles BEGIN SELECT 1; END",
        ],
        '"tiles" is a view where version 2 has a table',
    ),
    "changed index": (
        ["DROP INDEX tiles_top_right", "CREATE UNIQUE INDEX tiles_top_right ON tiles (n) WHERE created > {after}"],
        'changed index "tiles_top_right" on tiles',
    ),
    "dropped index": (["DROP INDEX tiles_left_top"], 'missing index "tiles_left_top" on tiles'),
    "extra table": (["CREATE TABLE notes (x)"], 'extra table "notes"'),
    # Issue 69: a trigger in its own namespace under an index's name; SQL that reads alike to a regex
    # but not to SQLite (quoted keywords, a no-break space), planted in sqlite_master as a peer could.
    "trigger named as an index": (
        [
            "CREATE TRIGGER misses_open AFTER INSERT ON manifests BEGIN DELETE FROM spent; "
            "DELETE FROM meta WHERE key = 'verified:dirty'; END"
        ],
        'extra trigger "misses_open" on manifests',
    ),
    "quoted NOT NULL": (
        [("tiles", r"\bn\s+INTEGER NOT NULL", 'n INTEGER "NOT" "NULL"')],
        'changed table "tiles"',
    ),
    "quoted PRIMARY KEY": (
        [("misses", r"\bid\s+INTEGER PRIMARY KEY", 'id INTEGER "PRIMARY" "KEY"')],
        'changed table "misses"',
    ),
    "no-break space in a trigger": (
        [("tiles_deleted", r"INTO meta ", "INTO meta\u00a0")],
        'changed trigger "tiles_deleted" on tiles',
    ),
}
CLASSES = list(HOSTILE)


@pytest.fixture(scope="module")
def day_lib(tmp_path_factory) -> Path:
    """A real library: one G=21 day built on it (tiles, the manifest, the board's spent rows)."""
    root = tmp_path_factory.mktemp("schema")
    lib = root / "lib.sqlite"
    build(BuildOptions(day=DAY, library=lib, out_dir=root / "out", size=21, seed=SEED), log=lambda _: None)
    return lib


def rows(path: Path) -> dict[str, set]:
    """Every row a reader of the file sees, per table (read raw: through whatever holds the name)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {
            "tiles": set(conn.execute("SELECT hash FROM tiles")),
            "manifests": set(conn.execute("SELECT day, json FROM manifests")),
            "spent": set(conn.execute("SELECT solution, board FROM spent")),
        }
    finally:
        conn.close()


def meta(path: Path) -> dict:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT key, value FROM meta"))
    finally:
        conn.close()


def plant(path: Path, how: str) -> None:
    """Run the hostile peer's statements on the file (plain sqlite3, as the peer's own code would); a
    (name, pattern, replacement) step rewrites that object's SQL in ``sqlite_master`` itself."""
    conn = sqlite3.connect(path)
    (after,) = conn.execute("SELECT max(created) FROM tiles").fetchone()  # only rows added later collide
    for stmt in HOSTILE[how][0]:
        if isinstance(stmt, tuple):
            name, pattern, new = stmt
            (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
            changed = re.sub(pattern, new, sql, count=1)
            assert changed != sql, (how, sql)
            conn.execute("PRAGMA writable_schema = ON")
            conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?", (changed, name))
        else:
            conn.execute(stmt.format(after=after))
    conn.commit()
    conn.close()


def hostile_copy(day_lib: Path, tmp_path: Path, how: str) -> Path:
    p = tmp_path / "peer.sqlite"
    shutil.copy(day_lib, p)
    plant(p, how)
    return p


def remote_state(url: str) -> tuple:
    b = open_backend(url)
    h = b.get_head()
    return (None if h is None else h.body, sorted(s.sha for s in b.list_snapshots()))


def generate(lib: Path, count: int = 5) -> str:
    r = run_tiles("library", "generate", "-L", str(lib), "--n", "6", "--count", str(count))
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("how", CLASSES)
def test_push_refuses_and_the_remote_is_untouched(day_lib, tmp_path, remote_url, how):
    clean = tmp_path / "clean.sqlite"
    shutil.copy(day_lib, clean)
    push(clean, open_backend(remote_url))
    peer = hostile_copy(day_lib, tmp_path, how)
    before = remote_state(remote_url)
    r = run_tiles("library", "push", "-L", str(peer), "--remote", remote_url, inherit=True)
    assert r.returncode == 3 and HOSTILE[how][1] in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert remote_state(remote_url) == before


def _plant_head(url: str, peer: Path) -> str:
    """Make ``peer`` HEAD's snapshot on top of the current one, as a hostile peer's own code would."""
    b = open_backend(url)
    head = b.get_head()
    doc = json.loads(head.body)
    data = peer.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    b.put_snapshot(sha, peer)
    b.put_head(
        json.dumps({"snapshot": sha, "size": len(data), "tiles": doc["tiles"], "parent": doc["snapshot"]}).encode(),
        head.etag,
    )
    return sha


@pytest.mark.parametrize("how", CLASSES)
def test_a_fresh_pull_heals_to_the_shipped_schema_and_then_takes_new_rows(day_lib, tmp_path, remote_url, how):
    clean = tmp_path / "clean.sqlite"
    shutil.copy(day_lib, clean)
    push(clean, open_backend(remote_url))
    bad = _plant_head(remote_url, hostile_copy(day_lib, tmp_path, how))
    fresh = tmp_path / "fresh.sqlite"
    r = pull(fresh, open_backend(remote_url))
    assert r.note and bad[:12] in r.note and HOSTILE[how][1] in r.note
    conn = sqlite3.connect(fresh)
    assert schema_problems(conn, str(fresh)) == []
    conn.close()
    assert rows(fresh) == rows(day_lib)
    assert "5 new, 0 already in" in generate(fresh)
    assert len(rows(fresh)["tiles"]) == len(rows(day_lib)["tiles"]) + 5


def test_a_remote_with_only_a_hostile_snapshot_is_refused(day_lib, tmp_path, remote_url):
    """No sound snapshot to heal to: the pull refuses (exit 4) and writes no library."""
    b = open_backend(remote_url)
    if remote_url.startswith("file://"):
        (Path(remote_url[7:]) / SNAPSHOT_DIR).mkdir(parents=True)
    peer = hostile_copy(day_lib, tmp_path, "trigger on tiles")
    data = peer.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    b.put_snapshot(sha, peer)
    assert b.put_head(json.dumps({"snapshot": sha, "size": len(data), "tiles": 1}).encode(), None)
    fresh = tmp_path / "fresh.sqlite"
    r = run_tiles("library", "pull", "-L", str(fresh), "--remote", remote_url, inherit=True)
    assert r.returncode == 4 and 'extra trigger "drop_tiles" on tiles' in r.stderr, r.stderr
    assert not fresh.exists()


@pytest.mark.parametrize("how", CLASSES)
def test_verify_names_the_object(day_lib, tmp_path, how):
    peer = hostile_copy(day_lib, tmp_path, how)
    r = run_tiles("library", "verify", "-L", str(peer))
    assert r.returncode == 3 and HOSTILE[how][1] in r.stderr and r.stderr.count("\n") == 1, r.stderr


@pytest.mark.parametrize("how", CLASSES)
def test_repair_recovers_every_row_and_generate_then_adds_rows(day_lib, tmp_path, how):
    peer = hostile_copy(day_lib, tmp_path, how)
    before = peer.read_bytes()
    out = tmp_path / "repaired.sqlite"
    r = run_tiles("library", "repair", "-L", str(peer), "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert any(HOSTILE[how][1] in s for s in rep["schema"])
    assert [d for d in rep["dropped"] if d["table"] != "meta"] == []  # no row of a table is lost
    assert all(d["row"].startswith(("verified:", "remote_")) for d in rep["dropped"])  # per-file state only
    assert peer.read_bytes() == before  # the original is never modified
    assert rows(out) == rows(day_lib)  # every row (all of them verify)
    assert meta(out)[f"stock:night:{DAY}"] == meta(day_lib)[f"stock:night:{DAY}"]
    assert meta(out)["library_id"] != meta(day_lib)["library_id"]
    conn = sqlite3.connect(out)
    assert schema_problems(conn, str(out)) == []
    conn.close()
    assert run_tiles("library", "verify", "-L", str(out)).returncode == 0
    assert "5 new, 0 already in" in generate(out)


@pytest.mark.parametrize("how", CLASSES)
def test_the_build_refuses_before_writing_anything(day_lib, tmp_path, how):
    peer = hostile_copy(day_lib, tmp_path, how)
    before = peer.read_bytes()
    out = tmp_path / "out"
    r = run_tiles(
        "daily",
        "build",
        "-L",
        str(peer),
        "--out",
        str(out),
        "--date",
        "2026-11-22",
        "--size",
        "21",
        "--seed",
        SEED.hex(),
    )
    assert r.returncode == 3 and HOSTILE[how][1] in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert peer.read_bytes() == before and not list(out.glob("*.json"))


def test_a_hostile_delta_stops_the_chain_before_it(day_lib, tmp_path, remote_url):
    """A delta is proven like a base: one with a planted trigger is refused by name and a pull keeps
    the state before it."""
    a = tmp_path / "a.sqlite"
    shutil.copy(day_lib, a)
    push(a, open_backend(remote_url))
    generate(a, 2)
    push(a, open_backend(remote_url))  # delta 1: sound
    good = rows(a)
    b = open_backend(remote_url)
    head = b.get_head()
    doc = json.loads(head.body)
    raw = tmp_path / "delta.sqlite"
    b.get_snapshot(doc["deltas"][0]["sha"], raw)
    plant(raw, "trigger on tiles")
    data = raw.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    b.put_snapshot(sha, raw)
    doc["deltas"].append({"sha": sha, "size": len(data)})
    b.put_head(json.dumps(doc).encode(), head.etag)  # a hostile peer's delta 2
    fresh = tmp_path / "fresh.sqlite"
    r = pull(fresh, open_backend(remote_url))
    assert r.note and sha[:12] in r.note and 'extra trigger "drop_tiles" on tiles' in r.note
    assert rows(fresh) == good


def test_verify_refuses_a_bundle_with_a_planted_trigger(day_lib, tmp_path):
    bundle = tmp_path / "day.bundle.sqlite"
    r = run_tiles("daily", "bundle", "--date", DAY, "-L", str(day_lib), "--out", str(bundle))
    assert r.returncode == 0, r.stderr
    manifest = day_lib.parent / "out" / f"{DAY}.json"
    assert run_tiles("referee", "verify", str(manifest), "-L", str(bundle)).returncode == 0
    plant(bundle, "trigger on spent")
    r = run_tiles("referee", "verify", str(manifest), "-L", str(bundle))
    assert r.returncode == 3 and 'extra trigger "drop_spent" on spent' in r.stderr, r.stderr


def test_repair_drops_exactly_the_rows_that_do_not_verify_and_says_why(day_lib, tmp_path):
    """A damaged library: one tile row's content changed, one spent row malformed, one with a text
    ``created``, and a stored manifest truncated. Repair leaves out exactly those, naming each."""
    peer = tmp_path / "damaged.sqlite"
    shutil.copy(day_lib, peer)
    conn = sqlite3.connect(peer)
    (bad_tile,) = conn.execute("SELECT hash FROM tiles ORDER BY rowid LIMIT 1").fetchone()
    conn.execute("UPDATE tiles SET givens = zeroblob(length(givens)) WHERE hash = ?", (bad_tile,))
    board = conn.execute("SELECT board FROM spent LIMIT 1").fetchone()
    conn.execute("INSERT INTO spent VALUES (?, ?, 11, ?, 1)", ("ab" * 32, board[0], DAY))  # n = 11
    conn.execute("INSERT INTO spent VALUES (?, ?, 10, ?, 'soon')", ("cd" * 32, board[0], DAY))
    conn.execute("INSERT INTO manifests VALUES ('2026-11-30', 'c0', '{\"day\":', 1)")
    conn.commit()
    conn.close()
    out = tmp_path / "repaired.sqlite"
    r = run_tiles("library", "repair", "-L", str(peer), "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    dropped = {
        (d["table"], d["row"].split("…")[0][:16]) for d in json.loads(r.stdout)["dropped"] if d["table"] != "meta"
    }
    assert dropped == {("tiles", bad_tile[:16]), ("spent", "ab" * 8), ("spent", "cd" * 8), ("manifests", "2026-11-30")}
    want = rows(day_lib)
    want["tiles"] = want["tiles"] - {(bad_tile,)}
    assert rows(out) == want
    assert run_tiles("library", "verify", "-L", str(out)).returncode == 0
