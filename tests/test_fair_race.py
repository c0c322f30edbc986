"""Racing builds on a real S3 server on loopback (moto): two machines that build on the same remote
state never both publish the same n >= 10 solution as fresh. The second push merges the first's
rows, re-checks its board, withdraws it and refuses (exit 5, one line, remote untouched); the
board rebuilt afterwards avoids the winner's solutions, and every published board verifies on a
third machine."""

from __future__ import annotations

import json
import sqlite3

import pytest
from cli_support import run_tiles
from s3_server import bucket, moto, s3_env  # noqa: F401
from test_fair_build import _solutions

import remote.sync as sync
from daily.build import BuildOptions, build
from remote.backend import open_backend
from remote.fair import BoardLostRace
from tilelib.errors import exit_code

SEED = bytes.fromhex("7ace" * 16)


def _build(lib, out, day, url, seed=SEED):
    return build(BuildOptions(day=day, library=lib, out_dir=out, size=61, seed=seed, remote=url), log=lambda _l: None)


def _head(url: str) -> str:
    return open_backend(url).get_head().etag


def test_the_second_push_of_a_racing_fresh_build_withdraws_its_board_and_refuses(bucket, s3_env, tmp_path, monkeypatch):
    url = f"s3://{bucket}/lib"
    a, b, c = (tmp_path / f"{k}.sqlite" for k in "abc")
    _build(a, tmp_path / "out-a", "2026-10-01", url, seed=bytes(32))  # a shared first night
    assert run_tiles("library", "pull", "-L", str(b), "--remote", url, inherit=True).returncode == 0

    # B builds 2026-10-03 on that state; before its push lands, A builds 2026-10-02 from the same
    # state with the same seed, so the two boards place the same solutions, and pushes first.
    real_push, heads = sync.push, {}

    def push_after_a(library, backend, **kw):
        if str(library) == str(b) and "a" not in heads:
            heads["a"] = None
            _build(a, tmp_path / "out-a", "2026-10-02", url)
            heads["a"] = _head(url)
        return real_push(library, backend, **kw)

    monkeypatch.setattr(sync, "push", push_after_a)
    with pytest.raises(BoardLostRace) as lost:
        _build(b, tmp_path / "out-b", "2026-10-03", url)
    monkeypatch.setattr(sync, "push", real_push)
    msg = str(lost.value)
    assert exit_code(lost.value) == 5 and "\n" not in msg
    assert "2026-10-03" in msg and "2026-10-02" in msg and "withdrawn" in msg
    assert _head(url) == heads["a"]  # the remote is untouched
    assert not (tmp_path / "out-b" / "2026-10-03.json").exists()
    assert (tmp_path / "out-b" / "2026-10-03.json.withdrawn").is_file()
    days_b = [d for (d,) in sqlite3.connect(b).execute("SELECT day FROM manifests ORDER BY day")]
    assert days_b == ["2026-10-01", "2026-10-02"]  # B now agrees with the remote

    # B builds its day again (no --force needed: the lost board is withdrawn) and publishes it
    r = run_tiles(
        "daily",
        "build",
        "--date",
        "2026-10-03",
        "--size",
        "61",
        "--seed",
        SEED.hex(),
        "-L",
        str(b),
        "--out",
        str(tmp_path / "out-b"),
        "--remote",
        url,
        inherit=True,
    )
    assert r.returncode == 0, r.stderr

    # a third machine sees three published boards, each verifies, no held solution twice
    assert run_tiles("library", "pull", "-L", str(c), "--remote", url, inherit=True).returncode == 0
    seen: dict[str, str] = {}
    for day in ("2026-10-01", "2026-10-02", "2026-10-03"):
        text = sqlite3.connect(c).execute("SELECT json FROM manifests WHERE day = ?", (day,)).fetchone()[0]
        p = tmp_path / f"{day}.json"
        p.write_text(text)
        assert json.loads(text)["reuse"] == "fresh"
        v = run_tiles("referee", "verify", str(p), "-L", str(c))
        assert v.returncode == 0, (day, v.stderr)
        for _i, _n, sol in _solutions(c, p):
            assert sol not in seen, (day, seen.get(sol))
            seen[sol] = day


def test_a_plain_push_of_a_board_a_published_board_beat_is_refused_with_exit_5(bucket, s3_env, tmp_path):
    url = f"s3://{bucket}/lib2"
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    _build(a, tmp_path / "out-a", "2026-10-01", url, seed=bytes(32))
    assert run_tiles("library", "pull", "-L", str(b), "--remote", url, inherit=True).returncode == 0
    # B builds without its remote (it has not seen A's next night), A publishes that night first
    build(
        BuildOptions(day="2026-10-05", library=b, out_dir=tmp_path / "out-b", size=61, seed=SEED), log=lambda _l: None
    )
    _build(a, tmp_path / "out-a", "2026-10-04", url)
    before = _head(url)
    r = run_tiles("library", "push", "-L", str(b), "--remote", url, inherit=True)
    assert r.returncode == 5 and r.stderr.count("\n") == 1 and "lost a race" in r.stderr, r.stderr
    assert _head(url) == before
    # with its board withdrawn, B's next push publishes the rest of what it has (rows are never lost)
    r = run_tiles("library", "push", "-L", str(b), "--remote", url, inherit=True)
    assert r.returncode == 0, r.stderr
