"""The manifest format (FORMAT §9): a golden text, byte-identical round trips, and the inputs it must reject."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from packers.packing import validate_packing
from referee.manifest import FORMAT, Manifest, from_json, load, seed_commit
from tilelib.errors import BadInput

H = ["%064x" % (0xA0 + i) for i in range(4)]
COMMIT = "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"  # sha256 of 32 zero bytes

GOLDEN = (
    '{"format":"tiles-manifest/1",\n'
    ' "day":"2026-11-29",\n'
    ' "board":{"cells":13,"pitch":12},\n'
    f' "seed_commit":"{COMMIT}",\n'
    ' "packer":{"name":"big-first","version":1,"params":{"a":[1,2],"b":1}},\n'
    ' "seed_tile":2,\n'
    ' "tiles":[\n'
    f'  {{"id":0,"x0":0,"y0":0,"n":6,"hash":"{H[0]}","t":0}},\n'
    f'  {{"id":1,"x0":5,"y0":0,"n":6,"hash":"{H[1]}","t":5}},\n'
    f'  {{"id":2,"x0":0,"y0":5,"n":6,"hash":"{H[2]}","t":15}},\n'
    f'  {{"id":3,"x0":5,"y0":5,"n":6,"hash":"{H[0]}","t":8}}\n'
    " ],\n"
    ' "zones":[\n'
    '  {"id":0,"rects":[[10,0,2,12],[0,10,10,2]]}\n'
    " ],\n"
    ' "clues":[\n'
    "  [3,2],\n"
    "  [7,1]\n"
    " ],\n"
    ' "status":"frontier",\n'
    ' "stats":{"clues_per_100":50.0,"tiles":4}}\n'
)


def golden_dict() -> dict:
    return json.loads(GOLDEN)


def test_golden_parses_and_reserialises_byte_identically():
    m = from_json(GOLDEN)
    assert m.to_json() == GOLDEN
    assert from_json(GOLDEN.encode()).to_json() == GOLDEN
    assert m.G == 13 and m.tile_count() == 4 and m.packing.seed_tile == 2
    assert m.hashes == (H[0], H[1], H[2], H[0]) and m.transforms == (0, 5, 15, 8)
    assert m.clues == ((3, 2), (7, 1)) and m.status == "frontier"
    assert m.tile(1) == {"id": 1, "x0": 5, "y0": 0, "n": 6, "hash": H[1], "t": 5}
    validate_packing(m.packing, m.packing.P)  # the golden's geometry is a real packing


def test_seed_commit_is_sha256_of_the_raw_seed():
    assert seed_commit(bytes(32)) == COMMIT


def test_key_order_and_dict_form():
    m = from_json(GOLDEN)
    assert list(m.to_dict()) == [
        "format",
        "day",
        "board",
        "seed_commit",
        "packer",
        "seed_tile",
        "tiles",
        "zones",
        "clues",
        "status",
        "stats",
    ]
    assert json.loads(m.to_json()) == m.to_dict() == golden_dict()


def test_the_play_rule_is_kept_written_after_reuse_and_absent_means_propagation():
    m = from_json(GOLDEN)
    assert m.play is None and m.play_rule == "propagation"
    d = golden_dict() | {"reuse": "fresh", "play": "tile-by-tile"}
    text = from_json(d).to_json()
    assert text.endswith(',\n "reuse":"fresh",\n "play":"tile-by-tile"}\n')
    assert from_json(text).play_rule == "tile-by-tile" and from_json(text).to_json() == text
    explicit = from_json(golden_dict() | {"play": "propagation"})
    assert explicit.play_rule == "propagation" and '"play":"propagation"' in explicit.to_json()


def test_extra_top_level_keys_are_ignored_and_not_written_back():
    d = golden_dict()
    d["note"] = "added by a newer writer"
    assert from_json(d).to_json() == GOLDEN


def test_empty_lists_serialise_compactly_and_round_trip():
    d = golden_dict()
    d["clues"], d["stats"] = [], {}
    text = from_json(d).to_json()
    assert '"clues":[],' in text and from_json(text).to_json() == text


def test_with_clues_and_digest():
    m = from_json(GOLDEN)
    m2 = m.with_clues([(1, 1)], status="unique")
    assert m2.clues == ((1, 1),) and m2.status == "unique" and m.clues == ((3, 2), (7, 1))
    assert m.digest() == from_json(GOLDEN).digest() != m2.digest()


@given(
    clues=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), unique=True, max_size=20),
    stats=st.dictionaries(
        st.text(max_size=8),
        st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8)),
        max_size=5,
    ),
    status=st.sampled_from(["frontier", "unique", "ambiguous"]),
    ts=st.lists(st.integers(0, 15), min_size=4, max_size=4),
)
def test_round_trip_is_a_fixed_point(clues, stats, status, ts):
    base = from_json(GOLDEN)
    m = Manifest(
        day=base.day,
        seed_commit=base.seed_commit,
        packing=base.packing,
        hashes=base.hashes,
        transforms=tuple(ts),
        clues=tuple(clues),
        status=status,
        stats=stats,
    )
    text = m.to_json()
    again = from_json(text)
    assert again.to_json() == text
    assert again.clues == tuple(clues) and again.transforms == tuple(ts) and again.stats == stats
    assert text.isascii() and text.endswith("}\n")


def _mut(path, value):
    def f(d):
        obj = d
        for k in path[:-1]:
            obj = obj[k]
        if value is KeyError:
            del obj[path[-1]]
        else:
            obj[path[-1]] = value
        return d

    return f


BAD = [
    ("not json", lambda d: "{nope", "not valid JSON"),
    ("top-level list", lambda d: [d], "JSON object"),
    ("no format", _mut(["format"], KeyError), "'format'"),
    ("other format", _mut(["format"], "tiles-manifest/2"), "format"),
    ("day shape", _mut(["day"], "29-11-2026"), "day"),
    ("day not on the calendar", _mut(["day"], "2026-02-30"), "calendar"),
    ("day not a string", _mut(["day"], 20261129), "day"),
    ("seed_commit upper case", _mut(["seed_commit"], COMMIT.upper()), "seed_commit"),
    ("seed_commit short", _mut(["seed_commit"], COMMIT[:-1]), "seed_commit"),
    ("board pitch", _mut(["board", "pitch"], 13), "pitch"),
    ("board cells float", _mut(["board", "cells"], 13.0), "board.cells"),
    ("packer name", _mut(["packer", "name"], 3), "packer.name"),
    ("seed tile bool", _mut(["seed_tile"], True), "seed_tile"),
    ("tile id order", _mut(["tiles", 1, "id"], 2), "tiles[1].id"),
    ("tile n float", _mut(["tiles", 0, "n"], 6.0), "tiles[0].n"),
    ("tile without hash", _mut(["tiles", 2, "hash"], KeyError), "tiles[2]"),
    ("tile hash short", _mut(["tiles", 2, "hash"], H[2][:63]), "tiles[2].hash"),
    ("tile hash upper", _mut(["tiles", 2, "hash"], H[2].upper()), "tiles[2].hash"),
    ("tile t 16", _mut(["tiles", 3, "t"], 16), "tiles[3].t"),
    ("tile t negative", _mut(["tiles", 3, "t"], -1), "tiles[3].t"),
    ("tile t string", _mut(["tiles", 3, "t"], "5"), "tiles[3].t"),
    ("zone rect short", _mut(["zones", 0, "rects", 0], [10, 0, 2]), "zones[0].rects[0]"),
    ("clues not a list", _mut(["clues"], {"0": [1, 1]}), "clues"),
    ("clue not a pair", _mut(["clues", 0], [3, 2, 1]), "clues[0]"),
    ("clue outside", _mut(["clues", 1], [13, 0]), "outside"),
    ("clue negative", _mut(["clues", 1], [0, -1]), "outside"),
    ("clue float", _mut(["clues", 1], [1.0, 1]), "clues[1]"),
    ("clue repeated", _mut(["clues", 1], [3, 2]), "repeats"),
    ("status unknown", _mut(["status"], "done"), "status"),
    ("no status", _mut(["status"], KeyError), "'status'"),
    ("stats list", _mut(["stats"], [1]), "stats"),
    ("play unknown", _mut(["play"], "greedy"), "play is 'greedy'"),
    ("play not a string", _mut(["play"], ["tile-by-tile"]), "play is"),
]


@pytest.mark.parametrize("name,mutate,words", BAD, ids=[b[0] for b in BAD])
def test_malformed_manifests_are_rejected_naming_the_field(name, mutate, words):
    bad = mutate(golden_dict())
    with pytest.raises(BadInput) as e:
        from_json(bad if isinstance(bad, str) else json.dumps(bad))
    msg = str(e.value)
    assert msg.startswith("manifest: ") and words in msg and "\n" not in msg


def test_nan_is_not_json_either_way():
    with pytest.raises(BadInput, match="not valid JSON"):
        from_json(GOLDEN.replace('"tiles":4', '"tiles":NaN'))
    m = from_json(GOLDEN).with_clues([], stats={"x": float("nan")})
    with pytest.raises(BadInput, match="stats"):
        m.to_json()


def test_non_utf8_and_unreadable_files(tmp_path):
    with pytest.raises(BadInput, match="UTF-8"):
        from_json(b"\xff\xfe{}")
    with pytest.raises(BadInput, match="cannot read"):
        load(tmp_path / "missing.json")
    p = tmp_path / "m.json"
    p.write_text(GOLDEN)
    assert load(p).to_json() == GOLDEN


def test_format_constant():
    assert FORMAT == "tiles-manifest/1"
