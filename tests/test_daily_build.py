"""`tiles daily build` end to end: frontier boards from an empty library, idempotence,
determinism, no secret in outputs, the lock, and a second machine verifying via the remote."""

import dataclasses
import json
import shutil

import pytest
from cli_support import run_tiles

from daily.build import BuildOptions, build
from daily.lock import build_lock
from referee.manifest import from_json
from referee.verify import verify
from stitcher.options import Drain, StitchOptions
from tilelib import ledger
from tilelib.errors import BadInput
from tilelib.store import Library

SEED = bytes.fromhex("5eed" * 16)
SECRET = "test-secret-do-not-print"


def run(tmp_path, size, *, seed=SEED, library=None, day="2026-11-29", **kw):
    logs: list[str] = []
    opts = BuildOptions(
        day=day, library=library or tmp_path / "lib.sqlite", out_dir=tmp_path / "out", size=size, seed=seed, **kw
    )
    return build(opts, log=logs.append), logs


def test_g61_from_an_empty_library_is_frontier_and_verifies_independently(tmp_path):
    res, logs = run(tmp_path, 61)
    assert res.status == "frontier" and not res.skipped
    text = res.manifest_path.read_text()
    m = from_json(text)
    assert m.status == "frontier" and m.G == 61 and m.tile_count() == res.tiles
    with Library.open(tmp_path / "lib.sqlite") as lib:
        assert ledger.get_manifest(lib.conn, "2026-11-29") == text
        report = verify(m, lib, SEED)  # full FORMAT §10 check, seed included
    assert report.status == "frontier"
    stages = [line.split()[0] for line in logs]
    assert stages == ["check", "pack", "stitch", "clues", "verify", "stock"]


def test_second_run_for_a_day_is_a_no_op_unless_forced(tmp_path):
    first, _ = run(tmp_path, 21)
    again, logs = run(tmp_path, 21)
    assert again.skipped and "already" in logs[-1]
    forced, _ = run(tmp_path, 21, force=True)
    assert forced.status == "frontier" and not forced.skipped


def test_same_library_and_seed_give_the_same_manifest_bit_for_bit(tmp_path):
    Library.create(tmp_path / "empty.sqlite").close()
    outs = []
    for name in ("a", "b"):
        d = tmp_path / name
        d.mkdir()
        shutil.copy(tmp_path / "empty.sqlite", d / "lib.sqlite")
        res, _ = run(d, 41, library=d / "lib.sqlite")
        outs.append(res.manifest_path.read_bytes())
    assert outs[0] == outs[1]


def test_secret_and_seed_never_appear_in_manifest_or_logs(tmp_path):
    from daily.seed import day_seed

    res, logs = run(tmp_path, 21, seed=None, secret=SECRET)
    seed_hex = day_seed(SECRET, "2026-11-29").hex()
    text = res.manifest_path.read_text() + "\n".join(logs)
    assert SECRET not in text and seed_hex not in text
    assert json.loads(res.manifest_path.read_text())["seed_commit"] != seed_hex


def test_remote_round_trip_lets_another_machine_verify(tmp_path):
    (tmp_path / "remote").mkdir()  # a missing remote directory is an error, like a missing bucket
    remote = f"file://{tmp_path / 'remote'}"
    res, logs = run(tmp_path, 31, remote=remote)
    assert [ln.split()[0] for ln in logs][0] == "pull" and logs[-1].startswith("push")
    other = tmp_path / "other.sqlite"
    from remote.backend import open_backend
    from remote.sync import pull

    pull(other, open_backend(remote))
    with Library.open(other) as lib:
        m = from_json(ledger.get_manifest(lib.conn, "2026-11-29"))
        assert verify(m, lib, SEED).status == "frontier"


def test_the_builds_push_checks_what_came_after_its_check_stage(tmp_path):
    """The check stage proves the whole (small) library; the push at the end of the same build
    checks only the rows added since (the build's own), not every row again — while a push of its
    own (``tiles library push``) still checks the whole small library."""
    (tmp_path / "remote").mkdir()
    remote = f"file://{tmp_path / 'remote'}"
    run(tmp_path, 31, remote=remote)
    lib_path = tmp_path / "lib.sqlite"
    with Library.open(lib_path) as lib:
        before = lib.count_tiles()
    res, _ = run(tmp_path, 31, day="2026-11-30", remote=remote)
    with Library.open(lib_path) as lib:
        after = lib.count_tiles()
    assert res.stages["check"]["rows_checked"] == before > 0
    assert res.stages["check"]["integrity"] == "full"
    assert res.stages["push"]["rows_checked"] == after - before > 0
    from remote.backend import open_backend
    from remote.sync import push

    assert push(lib_path, open_backend(remote)).check.rows_checked == after


def test_the_default_check_is_full_only_while_the_stored_manifests_are_small(tmp_path, monkeypatch):
    """``check_library(lib, "new")`` widens to the full check for a small library; stored manifests
    past ``FULL_CHECK_MAX_MANIFEST_BYTES`` (a byte over) make it check only what changed."""
    from trust import checks

    run(tmp_path, 21)
    with Library.open(tmp_path / "lib.sqlite") as lib:
        stored = lib.conn.execute("SELECT sum(length(CAST(json AS BLOB))) FROM manifests").fetchone()[0]
        monkeypatch.setattr(checks, "FULL_CHECK_MAX_MANIFEST_BYTES", stored)
        assert checks.is_small(lib.conn)
        assert checks.check_library(lib, "new").integrity == "full"
        checks.mark_verified(lib, checks.check_library(lib, "new"))
        monkeypatch.setattr(checks, "FULL_CHECK_MAX_MANIFEST_BYTES", stored - 1)
        assert not checks.is_small(lib.conn)
        rep = checks.check_library(lib, "new")
        assert (rep.integrity, rep.rows_checked) == ("quick", 0)
        monkeypatch.setattr(checks, "FULL_CHECK_MAX_ROWS", lib.count_tiles() - 1)
        monkeypatch.setattr(checks, "FULL_CHECK_MAX_MANIFEST_BYTES", stored)
        assert not checks.is_small(lib.conn)


@pytest.mark.slow
def test_g301_from_an_empty_library_is_frontier(tmp_path):
    res, logs = run(tmp_path, 301)
    assert res.status == "frontier"
    assert res.clues <= max(1, res.tiles // 100) * 3, logs  # clue budget sanity (target ≤ 1 per 100)


def test_cli_bad_input_writes_nothing(tmp_path):
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    for args in (
        ["--seed", "xyz"],
        ["--date", "2026-02-30", "--seed", "5eed" * 16],
        ["--size", "3", "--seed", "5eed" * 16],
        ["--packer", "nope", "--seed", "5eed" * 16],
        [],
    ):
        r = run_tiles("daily", "build", "--library", str(lib), "--out", str(out), *args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
        assert not out.exists()


def test_cli_build_while_locked_exits_6(tmp_path):
    lib = tmp_path / "lib.sqlite"
    with build_lock(lib):  # held by this process: the build must be another one
        r = run_tiles(
            "daily",
            "build",
            "--library",
            str(lib),
            "--out",
            str(tmp_path),
            "--size",
            "21",
            "--seed",
            "5eed" * 16,
            process=True,
        )
    assert r.returncode == 6 and "another daily build" in r.stderr


def test_cli_reveal(tmp_path):
    r = run_tiles("daily", "reveal", "--date", "2020-01-01", env={"TILES_SECRET": "k"})
    from daily.seed import day_seed

    assert r.returncode == 0 and r.stdout.strip() == day_seed("k", "2020-01-01").hex()
    r = run_tiles("daily", "reveal", "--date", "2999-01-01", env={"TILES_SECRET": "k"})
    assert r.returncode == 2 and "secret until" in r.stderr


def test_cli_json_prints_a_summary_of_every_stage(tmp_path):
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    args = ("daily", "build", "--library", str(lib), "--out", str(out), "--size", "31", "--seed", "5eed" * 16, "--json")
    r = run_tiles(*args)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["status"] == "frontier" and not s["skipped"] and s["tiles"] > 0
    assert list(s["stages"]) == ["check", "pack", "stitch", "clues", "verify", "stock"]
    assert sorted(s["stock"]["per_n"]) == ["10", "12", "14", "16"] and s["stock"]["nights"]
    for v in s["stages"].values():
        assert v["seconds"] >= 0 and "disk_write_bytes" in v and "write_call_bytes" in v
    assert s["stages"]["stitch"]["write_call_bytes"] > 0 and s["write_call_bytes"] > 0  # it inserted tiles
    st = s["stages"]["stitch"]
    assert st["placements"] == s["tiles"] and st["index"]["source"] == "scan"
    assert set(st["split"]) >= {"index", "place", "drain", "ledger", "index_add"}
    assert s["stitch"]["per_n"] and s["peak_rss_bytes"] > 0
    # the second build opens the index from the sidecar, reading only the rows the first one added
    again = json.loads(run_tiles(*args, "--force").stdout)
    idx = again["stages"]["stitch"]["index"]
    assert idx["source"] in ("sidecar", "refresh")
    assert idx["new_rows"] == s["stages"]["stitch"]["made"] or idx["source"] == "sidecar"


def test_the_build_opens_the_library_once_and_hands_every_stage_that_library(tmp_path, monkeypatch):
    """Issue 34: one open by the build itself, with a remote too (the remote's pull and push open
    the file on their own: a pull can replace it by a clone); every stage after the check gets the
    very Library object the build opened."""
    import daily.build as build_mod

    opened, seen = [], set()

    class Counting(Library):
        @classmethod
        def open(cls, path, *a, **kw):
            lib = Library.open(path, *a, **kw)
            opened.append(lib)
            return lib

    monkeypatch.setattr(build_mod, "Library", Counting)
    for name in ("_stitch", "_clues", "_verify", "_store", "_stock"):
        real = getattr(build_mod, name)

        def spy(*a, _real=real, _name=name, **kw):
            seen.add((_name, id(a[1] if _name != "_stock" else a[0])))
            return _real(*a, **kw)

        monkeypatch.setattr(build_mod, name, spy)
    remote = tmp_path / "remote"
    remote.mkdir()
    for day in ("2026-11-28", "2026-11-29"):  # the second starts from the state the first pushed
        opened.clear()
        seen.clear()
        res, logs = run(tmp_path, 21, day=day, remote=f"file://{remote}")
        assert res.status == "frontier" and len(opened) == 1
        assert {i for _n, i in seen} == {id(opened[0])}
        assert {n for n, _i in seen} == {"_stitch", "_clues", "_verify", "_store", "_stock"}
        assert [line.split()[0] for line in logs][-2:] == ["stock", "push"]


def test_the_night_is_made_once_from_the_options_and_frozen(tmp_path):
    from dataclasses import FrozenInstanceError

    from daily.build import plan
    from tilelib.spent import Reuse

    night = plan(
        BuildOptions(
            day="2026-11-29",
            library=tmp_path / "lib.sqlite",
            out_dir=tmp_path / "out",
            size=61,
            seed=SEED,
            reuse="any",
            profile="human",
            workers=1,
        )
    )
    assert (night.size, night.reuse, night.fresh, night.workers) == (61, Reuse.ANY, False, 1)
    assert night.commit == __import__("hashlib").sha256(SEED).hexdigest()
    assert night.manifest_path == tmp_path / "out" / "2026-11-29.json" and night.profile is not None
    with pytest.raises(FrozenInstanceError):
        night.size = 101
    assert night.with_start({"snapshot": "s", "deltas": []}).start == {"snapshot": "s", "deltas": []}
    assert night.start is None
    # the stitch's options are one value, made here and taken whole by the stitch
    assert night.stitch == StitchOptions(drain=Drain.INLINE, profile=night.profile, workers=1, fresh=False)


@pytest.mark.parametrize(
    "change,message",
    [
        ({"reuse": "some"}, "reuse"),
        ({"workers": 0}, "^workers must be >= 1, got 0$"),
        ({"seed": None, "secret": None}, "secret"),
    ],
)
def test_each_build_option_is_checked_once_by_the_plan(tmp_path, change, message):
    """The plan is where a build's options are checked (the CLI checks nothing twice): each bad
    value is BadInput (exit 2) there, before any file is touched."""
    from daily.build import plan

    opts = BuildOptions(day="2026-11-29", library=tmp_path / "lib.sqlite", out_dir=tmp_path / "out", seed=SEED)
    with pytest.raises(BadInput, match=message):
        plan(dataclasses.replace(opts, **change))
    assert list(tmp_path.iterdir()) == []
