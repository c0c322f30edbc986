"""docs/FORMAT.md's worked examples are golden: each ``golden=`` block and each contract table is
recomputed with the code, so the document cannot drift from what the code does."""

from __future__ import annotations

import hashlib
import json
import re

import format_doc as doc
import numpy as np
import pytest

from daily.seed import day_seed
from engine import count
from packers import PACKERS, validate_packing
from referee.manifest import KEY_ORDER, OPTIONAL_KEYS, from_json, seed_commit
from referee.verify import check_seed
from tilelib import bits, errors, plugins
from tilelib.audit import tile_problems
from tilelib.rng import Stream
from tilelib.symmetry import EDGE_MAP, compose, inverse, parts
from tilelib.tile import Features, Tile, content_hash

EXPECTED_BLOCKS = {"tile-found", "tile-keys", "tile-canonical", "compose", "edge-map", "stream", "seed", "manifest"}


def test_every_golden_block_is_present():
    assert set(doc.blocks()) == EXPECTED_BLOCKS


def test_sections_keep_the_spec_numbering():
    heads = re.findall(r"^## (\d+)\. ", doc.text(), re.M)
    assert [int(h) for h in heads] == list(range(1, 16))  # §15: past days as a dataset


# ---------------------------------------------------------------- the 6×6 example tile


def _found() -> Tile:
    f = doc.fields("tile-found")
    return Tile.from_grids(
        np.array(doc.grid(f["solution"]), dtype=np.uint8),
        np.array(doc.grid(f["givens"]), dtype=np.uint8),
        int(f["seam_mask"]),
    )


def _canonical() -> Tile:
    """The canonical example tile with the features the document states."""
    f = doc.fields("tile-canonical")
    n = int(f["n"])
    feats = Features(
        version=1,
        m=int(f["m"]),
        blank=float(f["blank"]),
        alt_sides=int(f["alt_sides"]),
        pins=int(f["pins"]),
        pin_depth=int(f["pin_depth"]),
        flip=bytes.fromhex(f["flip"]),
        alts=bytes.fromhex(f["alts"]),
    )
    t = Tile.from_grids(
        np.array(doc.grid(f["solution"]), dtype=np.uint8),
        np.array(doc.grid(f["givens"]), dtype=np.uint8),
        int(f["seam_mask"]),
        feats,
    )
    assert t.n == n
    return t


def test_found_tile_bits_rows_blobs_edges_and_puzzle_string():
    f = doc.fields("tile-found")
    tile = _found()
    assert tile.n == int(f["n"])
    assert bits.row_ints(tile.solution_grid) == [int(v) for v in f["row_ints"].split()]
    assert tile.solution.hex() == f["solution_blob"]
    assert tile.givens.hex() == f["givens_blob"]
    assert tile.solution == np.packbits(tile.solution_grid.ravel()).tobytes()
    assert list(tile.edges) == [int(v) for v in f["edges"].split()]
    assert str(tile.puzzle(0)) == f["puzzle"]
    assert bits.Puzzle.parse(f["puzzle"]).n == tile.n


def test_the_sixteen_keys_and_the_canonical_choice():
    tile = _found()
    rows = [line.split() for line in doc.blocks()["tile-keys"].splitlines() if line.strip()]
    assert [int(t) for t, _ in rows] == list(range(16))
    for t, key in rows:
        img = tile.transform(int(t))
        assert (img.solution + img.givens + bytes([img.seam_mask])).hex() == key
    smallest = min(range(16), key=lambda i: (bytes.fromhex(rows[i][1]), i))
    c = doc.fields("tile-canonical")
    assert smallest == int(c["canonical_t"]) == tile.canonical_transform()
    assert inverse(int(c["canonical_t"])) == int(c["placing_t"])


def test_canonical_tile_hash_input_hash_and_edges():
    c = doc.fields("tile-canonical")
    found, canon = _found(), _canonical()
    img = found.transform(int(c["canonical_t"]))
    assert (img.solution, img.givens, img.seam_mask) == (canon.solution, canon.givens, canon.seam_mask)
    assert canon.solution.hex() == c["solution_blob"] and canon.givens.hex() == c["givens_blob"]
    hash_input = bytes([canon.n]) + canon.solution + canon.givens + bytes([canon.seam_mask])
    assert hash_input.hex() == c["hash_input"]
    assert hashlib.sha256(hash_input).hexdigest() == c["hash"]
    assert content_hash(canon.n, canon.solution, canon.givens, canon.seam_mask) == c["hash"] == found.hash
    assert list(canon.edges) == [int(v) for v in c["edges"].split()]
    # placing the canonical tile with placing_t gives back the tile as found
    back = canon.transform(int(c["placing_t"]))
    assert (back.solution, back.givens, back.seam_mask) == (found.solution, found.givens, found.seam_mask)


def test_canonical_tile_features_are_consistent_and_complete():
    canon = _canonical()
    assert tile_problems(canon) == []
    res = count(canon.puzzle(0), k=canon.features.m + 1)
    assert res.count == canon.features.m
    assert sorted(bits.to_blob(g) for g in res.solutions) == sorted([canon.solution, canon.features.alts])
    assert abs(canon.features.blank - (1 - canon.givens_grid.sum() / 36)) < 1e-12


# ---------------------------------------------------------------- transforms


def test_compose_and_inverse_tables():
    lines = [ln for ln in doc.blocks()["compose"].splitlines() if ln.strip()]
    assert lines[0].split(":")[1].split() == [str(b) for b in range(16)]
    for a, line in enumerate(lines[1:17]):
        head, _, row = line.partition(":")
        assert head.strip() == f"a={a}"
        assert [int(v) for v in row.split()] == [compose(a, b) for b in range(16)]
    assert lines[17].startswith("inverse:")
    assert [int(v) for v in lines[17].split(":")[1].split()] == [inverse(t) for t in range(16)]


def test_compose_formula_stated_in_prose():
    for a in range(16):
        for b in range(16):
            ka, fa, ra = parts(a)
            kb, fb, rb = parts(b)
            r = (rb + ra) % 4 if fb == 0 else (rb - ra) % 4
            assert compose(a, b) == 8 * (ka ^ kb) + 4 * (fa ^ fb) + r


def test_edge_map_table():
    letters = "TRBL"
    rows = [ln.split() for ln in doc.blocks()["edge-map"].splitlines() if ln.strip()]
    assert len(rows) == 16
    for t, row in enumerate(rows):
        kv = dict(cell.split("=") for cell in row)
        k, f, r = parts(t)
        assert (int(kv["t"]), int(kv["k"]), int(kv["f"]), int(kv["r"])) == (t, k, f, r)
        for side, src in zip(("top", "right", "bottom", "left"), EDGE_MAP[t], strict=True):
            assert kv[side] == letters[src.side] + ("~" if src.reversed else "")
            assert src.complemented == bool(k)


def test_edge_map_agrees_with_grids_on_the_example():
    """The worked t=13 row: the edges of the transformed grid follow from the table alone."""
    tile = _found()
    n = tile.n
    rows = [dict(c.split("=") for c in ln.split()) for ln in doc.blocks()["edge-map"].splitlines() if ln.strip()]
    for t in range(16):
        want = []
        for side in ("top", "right", "bottom", "left"):
            src = rows[t][side]
            v = tile.edges["TRBL".index(src[0])]
            if src.endswith("~"):
                v = bits.reverse_bits(v, n)
            if rows[t]["k"] == "1":
                v ^= (1 << n) - 1
            want.append(v)
        assert list(tile.transform(t).edges) == want


# ---------------------------------------------------------------- stream, seed, manifest


def test_stream_block_and_draws():
    f = doc.fields("stream")
    seed = bytes.fromhex(f["seed"])
    label = f["label"].encode()
    block0 = hashlib.sha256(seed + len(label).to_bytes(4, "big") + label + bytes(8)).hexdigest()
    assert block0 == f["block0"]
    assert Stream(seed, f["label"]).bytes(32).hex() == f["block0"]
    s = Stream(seed, f["label"])
    assert [s.randbelow(26) for _ in range(4)] == [int(v) for v in f["randbelow26"].split()]


def test_seed_derivation_and_commitment():
    f = doc.fields("seed")
    msg = ("tiles-daily:" + f["day"]).encode()
    assert msg.hex() == f["message_hex"]
    seed = day_seed(f["secret"], f["day"])
    assert seed.hex() == f["seed"] == doc.fields("stream")["seed"]
    assert seed_commit(seed) == hashlib.sha256(seed).hexdigest() == f["seed_commit"]


def test_manifest_example_layout_commitment_and_packing():
    text = doc.blocks()["manifest"]
    m = from_json(text)
    assert m.to_json() == text  # the one text layout, byte for byte
    seed = bytes.fromhex(doc.fields("seed")["seed"])
    assert m.seed_commit == doc.fields("seed")["seed_commit"] == seed_commit(seed)
    assert m.day == doc.fields("seed")["day"]
    validate_packing(m.packing, m.packing.P)
    assert check_seed(m, seed) == "reproduced"  # bands at version 1 redraws this packing
    assert list(json.loads(text)) == list(KEY_ORDER)


def test_manifest_key_table_lists_the_writer_order():
    keys = [re.fullmatch(r"`(\w+)`", row[0]).group(1) for row in doc.table_rows("| key | type and range |")]
    assert keys[: len(KEY_ORDER)] == list(KEY_ORDER)
    assert (
        keys[len(KEY_ORDER) :] == list(OPTIONAL_KEYS) == ["difficulty", "reuse", "play", "build"]
    )  # optional, after stats


def test_packer_table():
    rows = doc.table_rows("| name | default params |")
    names = {re.match(r"`([\w-]+)`", r[0]).group(1): json.loads(r[1].strip("`")) for r in rows}
    assert list(names) == list(plugins.names(plugins.PACKER)) == list(PACKERS)  # the registry's rows, in order
    for name, defaults in names.items():
        assert defaults == PACKERS[name].defaults and PACKERS[name].version == 1


def test_exit_code_table():
    rows = doc.table_rows("| code | meaning | raised as |")
    seen = set()
    for code, _meaning, raised in rows:
        for cls_name in re.findall(r"`([\w.]+)`", raised):
            cls = getattr(errors, cls_name, None)
            if cls_name == "sqlite3.DatabaseError":
                import sqlite3

                cls = sqlite3.DatabaseError
            assert cls is not None, cls_name
            assert errors.exit_code(cls("x")) == int(code), cls_name
            seen.add(cls)
    for cls, code in errors.EXIT_CODES:  # every mapped class is covered by a row (itself or a base)
        assert any(issubclass(cls, base) for base in seen), cls
        assert errors.exit_code(cls("x")) == code


@pytest.mark.parametrize("name", ["tile-found", "tile-canonical", "seed", "stream"])
def test_key_value_blocks_have_no_duplicate_keys(name):
    lines = [ln.split(":")[0].strip() for ln in doc.blocks()[name].splitlines() if ln.strip()]
    assert len(lines) == len(set(lines))
