"""`tiles pack`: all packers at G in {11, 61, 1000}, JSON = the library's packing, errors exit 2 writing nothing."""

from __future__ import annotations

import json

import pytest
from cli_support import run_tiles

from packers import make_packing
from packers.packing import from_json, validate_packing

SEED = "0123456789abcdef" * 4
NAMES = ["big-first", "grown", "bands", "substitution", "islands"]


@pytest.mark.parametrize("G", [11, 61, 1000])
@pytest.mark.parametrize("name", NAMES)
def test_pack_writes_the_packing(tmp_path, name, G):
    out = tmp_path / "p.json"
    png = tmp_path / "p.png"
    argv = ["pack", "--packer", name, "--size", str(G), "--seed", SEED, "--json", str(out)]
    if G != 1000:  # pictures at 1000 are covered by docs/packers and the render tests; keep this fast
        argv += ["--png", str(png)]
    r = run_tiles(*argv)
    assert r.returncode == 0
    line = r.stdout.strip()
    assert "\n" not in line and f"G={G}" in line and "tiles" in line and "zone" in line
    doc = json.loads(out.read_text())
    assert set(doc) == {"board", "packer", "seed_tile", "tiles", "zones"}
    assert doc["board"] == {"cells": G, "pitch": G - 1}
    p = from_json(doc)
    validate_packing(p, G - 1)
    assert p == make_packing(name, G, bytes.fromhex(SEED))
    assert doc["packer"]["name"] == name and doc["packer"]["params"] == dict(p.params)
    if G != 1000:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_default_packer_is_big_first(tmp_path):
    out = tmp_path / "p.json"
    r = run_tiles("pack", "--size", "40", "--seed", SEED, "--json", str(out))
    assert r.returncode == 0
    assert json.loads(out.read_text())["packer"]["name"] == "big-first"


def test_params_reach_the_packer(tmp_path):
    out = tmp_path / "p.json"
    assert (
        run_tiles(
            "pack", "--packer", "bands", "--size", "100", "--seed", SEED, "--json", str(out), "--params", '{"sub": 50}'
        ).returncode
        == 0
    )
    assert json.loads(out.read_text())["packer"]["params"] == {"sub": 50}


@pytest.mark.parametrize(
    "args,words",
    [
        (["--packer", "mondrian", "--size", "100", "--seed", SEED], "unknown packer"),
        (["--size", "5", "--seed", SEED], "size"),
        (["--size", "0", "--seed", SEED], "size"),
        (["--size", "-10", "--seed", SEED], "size"),
        (["--size", "big", "--seed", SEED], "size"),
        (["--size", "100", "--seed", "xyz"], "seed"),
        (["--size", "100", "--seed", SEED[:-2]], "seed"),
        (["--size", "100", "--seed", SEED + "00"], "seed"),
        (["--size", "100", "--seed", SEED, "--params", "{"], "params"),
        (["--size", "100", "--seed", SEED, "--params", "[1]"], "params"),
        (["--size", "100", "--seed", SEED, "--params", '{"nope": 1}'], "nope"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, args, words):
    out, png = tmp_path / "p.json", tmp_path / "p.png"
    r = run_tiles("pack", *args, "--json", str(out), "--png", str(png))
    assert r.returncode == 2
    err = r.stderr.strip()
    assert "\n" not in err and words in err
    assert list(tmp_path.iterdir()) == []


def test_unwritable_output_is_a_clean_error(tmp_path):
    r = run_tiles("pack", "--size", "20", "--seed", SEED, "--json", str(tmp_path / "no" / "dir" / "p.json"))
    assert r.returncode == 2
    assert "cannot write" in r.stderr
