"""Issue 11, families 5 and 6: hostile input never gets a traceback, is bounded, and exits by the table;
nothing is judged on a board that verify would reject.

Every case runs the real ``tiles`` entry point (``cli_support.run_tiles``) and checks the exit code, that stderr
is one ``tiles: error:`` line (no traceback), and that nothing was written where nothing should be.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_support import run_tiles
from referee_support import board21 as shared_board21
from referee_support import copy_fixture
from serve_support import silent_port

from referee.manifest import from_json

SEED_HEX = "5eed" * 16


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    return shared_board21(tmp_path_factory)


cli = run_tiles


def refused(r: subprocess.CompletedProcess, code: int, *words: str) -> None:
    assert r.returncode == code, (r.returncode, r.stderr)
    err = r.stderr.strip()
    assert "Traceback" not in r.stderr and err.startswith("tiles: error:") and len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, (w, err)


def write(tmp_path: Path, name: str, data) -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def manifest_dict(fx) -> dict:
    return json.loads(fx.manifest.to_json())


# ---------------------------------------------------------------- the judge's gate


@pytest.mark.parametrize(
    "name, change, words",
    [
        ("a gap in the packing", lambda d: d["tiles"].pop(), "packing"),
        ("seed tile 9999", lambda d: d.update(seed_tile=9999), "seed_tile 9999"),
        ("no tiles", lambda d: d.update(tiles=[]), "packing"),
        (
            "overlapping tiles",
            lambda d: d["tiles"][1].update(x0=d["tiles"][0]["x0"], y0=d["tiles"][0]["y0"]),
            "overlaps",
        ),
        ("x0 = -8", lambda d: d["tiles"][0].update(x0=-8), "negative"),
        ("unknown packer", lambda d: d["packer"].update(name="nope"), "unknown packer"),
    ],
)
def test_judge_scores_nothing_on_a_manifest_verify_rejects(fx, tmp_path, name, change, words):
    d = manifest_dict(fx)
    change(d)
    man = write(tmp_path, "m.json", d)
    sub = write(tmp_path, "s.json", {"run": "r", "moves": [{"tile": 0, "cells": "0" * 36}]})
    runs = tmp_path / "runs.sqlite"
    r = cli("referee", "judge", str(man), str(sub), "--runs", str(runs), "--library", str(fx.lib_path))
    refused(r, 5, words)
    assert not runs.exists()  # refused before the runs file is even opened
    v = cli("referee", "verify", str(man), "--library", str(fx.lib_path))
    refused(v, 5, words)  # the judge refuses exactly what verify refuses


def test_judge_and_verify_agree_on_a_sound_manifest(fx, tmp_path):
    man = write(tmp_path, "m.json", fx.manifest.to_json())
    sub = write(tmp_path, "s.json", {"run": "r", "moves": [{"tile": 0, "cells": "0" * 36}]})
    r = cli(
        "referee", "judge", str(man), str(sub), "--runs", str(tmp_path / "runs.sqlite"), "--library", str(fx.lib_path)
    )
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[0])["tile"] == 0


# ---------------------------------------------------------------- bounded input


def test_deeply_nested_json_is_bad_input(fx, tmp_path):
    deep = write(tmp_path, "deep.json", "[" * 200_000)
    refused(cli("referee", "verify", str(deep), "--library", str(fx.lib_path)), 2, "nested")
    man = write(tmp_path, "m.json", fx.manifest.to_json())
    refused(
        cli(
            "referee", "judge", str(man), str(deep), "--runs", str(tmp_path / "r.sqlite"), "--library", str(fx.lib_path)
        ),
        2,
        "submission",
        "nested",
    )
    assert not (tmp_path / "r.sqlite").exists()


def test_oversized_inputs_are_refused_before_they_are_read(fx, tmp_path):
    from referee.judge import MAX_MOVES
    from referee.manifest import MAX_MANIFEST_BYTES

    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(MAX_MANIFEST_BYTES + 1)
    refused(cli("referee", "verify", str(big), "--library", str(fx.lib_path)), 2, "limit")
    man = write(tmp_path, "m.json", fx.manifest.to_json())
    many = write(tmp_path, "s.json", {"run": "r", "moves": [{"tile": 0, "cells": "0"}] * (MAX_MOVES + 1)})
    refused(
        cli(
            "referee", "judge", str(man), str(many), "--runs", str(tmp_path / "r.sqlite"), "--library", str(fx.lib_path)
        ),
        2,
        "moves",
        "limit",
    )


def test_a_huge_board_size_is_refused_without_allocating_it(fx, tmp_path):
    d = manifest_dict(fx)
    d["board"] = {"cells": 10**6, "pitch": 10**6 - 1}
    r = cli("referee", "verify", str(write(tmp_path, "m.json", d)), "--library", str(fx.lib_path))
    assert r.returncode in (2, 5)
    refused(r, r.returncode, "pitch")


@pytest.mark.parametrize(
    "args, code, words",
    [
        (["solve", "--givens", "." * 36, "--k", str(2**70)], 2, ["--k"]),
        (["solve", "--givens", "." * 36, "--k", "0"], 2, ["--k"]),
        (["solve", "--givens", "." * 10_000], 2, ["n <= 16"]),
        (["library", "generate", "--n", "6", "--count", str(10**11)], 2, ["--count"]),
        (["daily", "reveal", "--date", "2099-01-01"], 2, ["secret until the day is over"]),
        (
            ["library", "pull", "--remote", "file:///nowhere", "--verify", "all"],
            2,
            ["--verify", "'new', 'sample', 'none'"],
        ),
        (["library", "pull", "--remote", "file:///nowhere", "--integrity", "fast"], 2, ["--integrity"]),
        (["library", "push", "--remote", "file:///nowhere", "--check", "half"], 2, ["--check", "'new', 'full'"]),
    ],
)
def test_cli_ranges_and_messages(tmp_path, args, code, words):
    r = cli(*args, env={"TILES_LIBRARY": str(tmp_path / "lib.sqlite"), "TILES_SECRET": "s"})
    refused(r, code, *words)
    assert "impl=" not in r.stderr and not (tmp_path / "lib.sqlite").exists()


@pytest.mark.parametrize("params, words", [("{", "--params is not JSON"), ("[1]", "--params must be a JSON object")])
def test_one_params_parser_one_message(tmp_path, params, words):
    """``tiles pack`` and ``tiles daily build`` parse --params with the one parser: same message."""
    seed = "00" * 32
    for args in (
        ["pack", "--size", "21", "--seed", seed],
        ["daily", "build", "--date", "2026-11-29", "--size", "21", "--seed", seed, "--out", str(tmp_path)],
    ):
        r = cli(*args, "--params", params, env={"TILES_LIBRARY": str(tmp_path / "lib.sqlite")})
        refused(r, 2, words)
    assert not (tmp_path / "lib.sqlite").exists()


def test_reveal_names_only_options_it_has():
    r = cli("daily", "reveal", "--help")
    assert r.returncode == 0 and "--seed" not in r.stdout
    r = cli("daily", "reveal", "--date", "2099-01-01", env={"TILES_SECRET": "s"})
    assert "--seed" not in r.stderr


# ---------------------------------------------------------------- paths


def test_library_paths_that_cannot_be_a_file(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for path in (tmp_path, afile / "lib.sqlite"):
        for args in (["library", "stats"], ["library", "init"], ["library", "verify"]):
            refused(cli(*args, "--library", str(path)), 2, str(path))
    assert afile.read_text() == "x"


def test_runs_in_a_missing_folder_is_bad_input(fx, tmp_path):
    man = write(tmp_path, "m.json", fx.manifest.to_json())
    sub = write(tmp_path, "s.json", {"run": "r", "moves": []})
    refused(
        cli(
            "referee",
            "judge",
            str(man),
            str(sub),
            "--runs",
            str(tmp_path / "no" / "runs.sqlite"),
            "--library",
            str(fx.lib_path),
        ),
        2,
        "does not exist",
    )


def test_out_that_is_a_file_is_refused_before_any_work(tmp_path):
    out = tmp_path / "out"
    out.write_text("keep me")
    lib = tmp_path / "lib.sqlite"
    r = cli(
        "daily",
        "build",
        "--date",
        "2026-11-20",
        "--size",
        "21",
        "--seed",
        SEED_HEX,
        "--out",
        str(out),
        "--library",
        str(lib),
    )
    refused(r, 2, "--out")
    assert out.read_text() == "keep me" and not lib.exists()


# ---------------------------------------------------------------- the remote


@pytest.mark.parametrize("endpoint", ["notaurl", "http://[::1", "ftp://example.invalid", "http://:80"])
def test_an_invalid_s3_endpoint_is_bad_input(tmp_path, endpoint):
    r = cli(
        "library",
        "pull",
        "--remote",
        "s3://bucket-one/lib",
        "--library",
        str(tmp_path / "x.sqlite"),
        env={"TILES_S3_ENDPOINT": endpoint, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"},
    )
    refused(r, 2, "TILES_S3_ENDPOINT")


@pytest.mark.slow
def test_an_endpoint_that_never_answers_fails_instead_of_hanging(tmp_path):
    """The client's own timeouts end the pull (exit 4); the 90 s given to the command is a guard."""
    with silent_port() as port:
        r = cli(
            "library",
            "pull",
            "--remote",
            "s3://bucket-one/lib",
            "--library",
            str(tmp_path / "x.sqlite"),
            env={
                "TILES_S3_ENDPOINT": f"http://127.0.0.1:{port}",
                "AWS_ACCESS_KEY_ID": "k",
                "AWS_SECRET_ACCESS_KEY": "s",
            },
            timeout=90,
        )
    refused(r, 4, "bucket-one")
    assert not (tmp_path / "x.sqlite").exists()


def test_from_json_still_parses_what_it_writes(fx):
    assert from_json(fx.manifest.to_json()).to_json() == fx.manifest.to_json()


def test_copy_fixture_is_independent(fx, tmp_path):
    c = copy_fixture(fx, tmp_path / "lib.sqlite")
    assert c.lib_path != fx.lib_path and c.lib_path.exists()
