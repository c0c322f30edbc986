"""Issue 29: every board built can be played one tile at a time (FORMAT §10, step ``closure``).

The judge of that is ``tests/tile_player.py``: a player that solves each playable tile from its own
view with its own brute-force solver and plays it only when the view admits exactly one grid. It
clears every board the build makes (one over real HTTP), while the same board with the clues the
tile-by-tile rule added taken away (its stats fixed up) stalls it, fails ``referee verify`` at step
``closure`` (exit 5, naming the stalled tiles) and is rejected by the outside verifier too.
Manifests without ``play`` keep being verified by the rule they were built under.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import tile_player
from cli_support import run_tiles
from independent_verifier import Rejected
from independent_verifier import verify as independent_verify
from serve_support import serving

from daily.build import BuildOptions, build
from referee.manifest import load
from referee.service.boards import DayBoard, load_manifest
from tilelib.errors import BadInput
from tilelib.store import Library

WAVES = re.compile(r"playable tile by tile in (\d+) waves")


def play_local(manifest: Path, lib: Path, runs: Path) -> tile_player.Outcome:
    with Library.open(lib) as lb:
        db = DayBoard.load(load_manifest(manifest), lb, runs)
    return tile_player.play(tile_player.Local(db))


def build_night(tmp_path: Path, secret: str, size: int, reuse: str = "fresh") -> tuple[Path, dict]:
    """Day 1 on G=61 (the library's first tiles), then day 2 on G=``size``: the issue's recipe."""
    lib, out = tmp_path / "lib.sqlite", tmp_path / "out"
    for day, g, extra in (("2026-10-01", 61, ()), ("2026-10-02", size, ("--reuse", reuse))):
        r = run_tiles(
            "daily",
            "build",
            "--date",
            day,
            "--size",
            str(g),
            "--library",
            str(lib),
            "--out",
            str(out),
            "--json",
            *extra,
            env={"TILES_SECRET": secret},
        )
        assert r.returncode == 0, r.stderr[-2000:]
    return out / "2026-10-02.json", json.loads(r.stdout)


def strip_play_clues(path: Path, k: int, dest: Path) -> Path:
    """The manifest with its last ``k`` clues (the ones the tile-by-tile rule added) removed and
    ``stats.clues`` fixed up, so that only the closure can object."""
    m = load(path)
    stats = dict(m.stats) | {"clues": len(m.clues) - k}
    dest.write_text(m.with_clues(m.clues[: len(m.clues) - k], stats=stats).to_json())
    return dest


def reward_of(path: Path) -> int:
    return sum(t["n"] ** 2 for t in json.loads(path.read_text())["tiles"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "secret,reuse", [("agent-secret", "any"), ("secret-9", "any"), ("secret-6", "any"), ("secret-1", "fresh")]
)
def test_g301_boards_are_cleared_one_tile_at_a_time_and_fail_without_their_play_clues(tmp_path, secret, reuse):
    path, summary = build_night(tmp_path, secret, 301, reuse)
    lib = tmp_path / "lib.sqlite"
    m = load(path)
    assert m.play == "tile-by-tile" and m.status == "frontier"
    assert summary["clues"] == len(m.clues) <= m.tile_count() / 100  # the clue budget
    assert m.stats["stitch"]["final_fill"] >= 0.99 and m.stats["zone_fraction"] < 0.05
    r = run_tiles("referee", "verify", str(path), "--library", str(lib))
    assert r.returncode == 0, r.stderr
    waves = int(WAVES.search(r.stdout).group(1))
    assert independent_verify(path.read_text(), str(lib))["waves"] == waves
    got = play_local(path, lib, tmp_path / "runs.sqlite")
    assert got.cleared and got.solved == m.tile_count() and got.reward == reward_of(path)
    assert got.rounds == waves  # one batch per wave: the player meets the closure's waves

    # Under generator 4 a split ringed a square of secret-6's board with zones (counted isolated,
    # made zone); under generator 5 none of 52 + 80 seeded G=301 boards has one, so that case is
    # held by tests/test_stitch_isolated.py, and secret-6 stays as one more board to clear.
    k = summary["play_clues"]
    if secret == "secret-9":
        assert k >= 1  # this board stalls without the rule (measured, generator 5)
    if k:
        bare = strip_play_clues(path, k, tmp_path / "bare.json")
        r = run_tiles("referee", "verify", str(bare), "--library", str(lib))
        assert r.returncode == 5 and r.stderr.startswith("tiles: error: step closure: "), r.stderr
        assert "stalls after" in r.stderr and re.search(r"tiles \d+", r.stderr)
        with pytest.raises(Rejected) as e:
            independent_verify(bare.read_text(), str(lib))
        assert e.value.step == "closure"
        stuck = play_local(bare, lib, tmp_path / "runs2.sqlite")
        assert not stuck.cleared and stuck.solved < m.tile_count()
        # the same board under the rule before (no play key) is what older manifests promise: it verifies
        old = tmp_path / "old.json"
        old.write_text(replace(load(bare), play=None).to_json())
        r = run_tiles("referee", "verify", str(old), "--library", str(lib))
        assert r.returncode == 0 and "playable tile by tile" not in r.stdout, r.stderr


@pytest.mark.slow
def test_the_issue_board_is_cleared_over_http(tmp_path):
    path, _summary = build_night(tmp_path, "agent-secret", 301, "any")
    with serving(tmp_path / "lib.sqlite", tmp_path / "runs.sqlite", [path]) as base:
        client = tile_player.Http(base + "/api/v1", "2026-10-02")
        got = tile_player.play(client)
        score = client.score()
    assert got.cleared and got.reward == reward_of(path) == score["reward"]


def test_a_build_under_the_rule_before_writes_no_play_key_and_only_propagation_clues(tmp_path):
    seed = bytes.fromhex("29" * 32)
    res = {}
    for play in ("tile-by-tile", "propagation"):
        d = tmp_path / play
        res[play] = build(
            BuildOptions(day="2026-10-02", library=d / "lib.sqlite", out_dir=d / "out", size=61, seed=seed, play=play),
            log=lambda _line: None,
        )
    new, old = (load(res[p].manifest_path) for p in ("tile-by-tile", "propagation"))
    assert new.play == "tile-by-tile" and old.play is None
    assert "playable tile by tile in" in res["tile-by-tile"].verify_line
    assert "waves" not in res["propagation"].verify_line and res["propagation"].play_clues == 0
    k = res["tile-by-tile"].play_clues
    assert new.clues[: len(new.clues) - k] == old.clues  # the rule only appends clues
    assert (new.packing, new.hashes, new.transforms) == (old.packing, old.hashes, old.transforms)


def test_a_bad_play_rule_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="play rule 'greedy'"):
        build(
            BuildOptions(
                day="2026-10-02",
                library=tmp_path / "lib.sqlite",
                out_dir=tmp_path,
                size=61,
                seed=bytes(32),
                play="greedy",
            ),
            log=lambda _line: None,
        )
    assert not (tmp_path / "lib.sqlite").exists()
