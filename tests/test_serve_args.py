"""`tiles referee serve` with a bad argument refuses to start with its exit code (FORMAT §12) and one
line, and leaves no file behind: the runs database (and its -wal, -shm, -journal) is made only once
every other argument has been checked. Each case is the real command in a fresh process."""

from __future__ import annotations

import json
import socket

import pytest
from cli_support import run_tiles
from serve_support import board21_day, free_port


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The G=21 library and its day's manifest, and a few bad inputs beside them."""
    fx, d, manifest, _ = board21_day(tmp_path_factory, "args")
    (d / "notes.txt").write_text("not a library\n")
    (d / "broken.json").write_text("{nope")
    m = json.loads(manifest.read_text())
    m["tiles"][1]["x0"] += 1  # a packing that runs off the board
    (d / "offboard.json").write_text(json.dumps(m))
    m = json.loads(manifest.read_text())
    m["tiles"][0]["hash"] = "0" * 64  # a tile the library does not have
    (d / "unknown-tile.json").write_text(json.dumps(m))
    return {"lib": fx.lib_path, "day": manifest, "dir": d}


# (name, arguments with {lib} {day} {dir} {port} {busy}, exit code, words of the one error line)
CASES = [
    ("library missing", ["-L", "{dir}/none.sqlite", "--manifest", "{day}"], 3, "no tile library"),
    ("library not a library", ["-L", "{dir}/notes.txt", "--manifest", "{day}"], 3, "not a tiles library"),
    ("manifest missing", ["-L", "{lib}", "--manifest", "{dir}/none.json"], 2, "cannot read"),
    ("manifest not JSON", ["-L", "{lib}", "--manifest", "{dir}/broken.json"], 2, "not valid JSON"),
    ("manifest off the board", ["-L", "{lib}", "--manifest", "{dir}/offboard.json"], 5, "runs out of the board"),
    ("manifest of another library", ["-L", "{lib}", "--manifest", "{dir}/unknown-tile.json"], 3, "out of date"),
    ("day not in the library", ["-L", "{lib}", "--day", "2020-01-01"], 2, "no manifest for 2020-01-01"),
    ("port out of range", ["-L", "{lib}", "--manifest", "{day}", "--port", "70000"], 2, "--port"),
    ("port zero", ["-L", "{lib}", "--manifest", "{day}", "--port", "0"], 2, "--port"),
    ("port taken", ["-L", "{lib}", "--manifest", "{day}", "--port", "{busy}"], 2, "Address already in use"),
    (
        "host unknown",
        ["-L", "{lib}", "--manifest", "{day}", "--host", "no-such-host.invalid", "--port", "{port}"],
        2,
        "cannot resolve",
    ),
    (
        "host not ours",
        ["-L", "{lib}", "--manifest", "{day}", "--host", "192.0.2.1", "--port", "{port}"],
        2,
        "cannot listen",
    ),
    ("max body zero", ["-L", "{lib}", "--manifest", "{day}", "--max-body", "0"], 2, "--max-body"),
    ("max moves negative", ["-L", "{lib}", "--manifest", "{day}", "--max-moves", "-1"], 2, "--max-moves"),
    ("workers zero", ["-L", "{lib}", "--manifest", "{day}", "--workers", "0"], 2, "--workers"),
    ("poll zero", ["-L", "{lib}", "--manifest", "{day}", "--poll", "0"], 2, "--poll"),
    (
        "runs folder missing",
        ["-L", "{lib}", "--manifest", "{day}", "--runs", "{out}/no/runs.sqlite"],
        2,
        "does not exist",
    ),
]


@pytest.mark.parametrize("name, args, code, words", CASES, ids=[c[0] for c in CASES])
def test_a_bad_argument_is_one_line_and_no_file(inputs, tmp_path, name, args, code, words):
    out = tmp_path / "out"
    out.mkdir()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        fill = {
            **{k: str(v) for k, v in inputs.items()},
            "out": str(out),
            "port": str(free_port()),
            "busy": str(busy.getsockname()[1]),
        }
        argv = [a.format(**fill) for a in args]
        if "--runs" not in argv:
            argv += ["--runs", str(out / "runs.sqlite")]
        if "--port" not in argv:
            argv += ["--port", fill["port"]]
        r = run_tiles("referee", "serve", *argv, process=True, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == code, (name, r.returncode, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("tiles: error:") and words in lines[0], (name, r.stderr)
    assert r.stdout == ""
    assert sorted(p.name for p in out.iterdir()) == [], name


def test_good_arguments_make_the_runs_file(inputs, tmp_path):
    """The counterpart: the same command with nothing wrong starts, makes its runs file, and a stop
    signal ends it with exit 0 (so the cases above fail for their argument, not for the set-up)."""
    from serve_support import service_process

    runs = tmp_path / "runs.sqlite"
    with service_process(inputs["lib"], runs, [inputs["day"]], log=tmp_path / "serve.log") as (proc, _base):
        assert runs.exists()
    assert proc.returncode == 0
    assert (tmp_path / "serve.log").read_text().splitlines()[0].startswith("tiles referee serve: 2026-11-29: G=21")
