"""generator.batch and `tiles library generate`: determinism across worker counts, appending, bad input."""

import pytest
from cli_support import run_tiles

from generator.batch import append_generated, generate, tile_stream
from generator.make import GenParams, make_tile
from tilelib.errors import BadInput
from tilelib.store import Library

SEED = bytes.fromhex("5e" * 32)


def test_same_tiles_for_any_worker_count():
    p = GenParams.make(8, 2, 15)
    one = list(generate(p, 6, SEED, workers=1))
    two = list(generate(p, 6, SEED, workers=2))
    assert one == two
    assert len({t.hash for t in one}) == 6
    assert one[3] == make_tile(p, tile_stream(SEED, 3))  # tile i owns stream i


def test_seed_changes_the_tiles():
    p = GenParams.make(8, 1, 0)
    a = list(generate(p, 3, SEED))
    b = list(generate(p, 3, bytes(32)))
    assert {t.hash for t in a}.isdisjoint({t.hash for t in b})


def test_append_counts_new_rows_and_duplicates(tmp_path):
    path = tmp_path / "lib.sqlite"
    p = GenParams.make(6, 2, 15)
    rep = append_generated(path, p, 5, SEED, batch=2)
    assert rep.generated == 5 and rep.inserted + rep.duplicates == 5
    with Library.open(path) as lib:
        assert lib.count_tiles(6) == rep.inserted
    again = append_generated(path, p, 5, SEED)
    assert again.inserted == 0 and again.duplicates == 5


def test_bad_batch_arguments_write_nothing(tmp_path):
    path = tmp_path / "lib.sqlite"
    p = GenParams.make(6)
    for kw in (dict(count=0, seed=SEED), dict(count=2, seed=b"short"), dict(count=2, seed=SEED, workers=0)):
        with pytest.raises(BadInput):
            append_generated(path, p, **kw)
    assert not path.exists()


# ---------------------------------------------------------------- the CLI


def test_cli_appends_k_tiles_reproducibly(tmp_path):
    path = tmp_path / "lib.sqlite"
    r = run_tiles(
        "library",
        "generate",
        "--n",
        "8",
        "--count",
        "4",
        "--seam-mask",
        "15",
        "--seed",
        SEED.hex(),
        "--library",
        str(path),
    )
    assert r.returncode == 0, r.stderr
    assert "generated 4 n=8 tiles" in r.stdout and "4 new" in r.stdout and SEED.hex() in r.stdout
    with Library.open(path) as lib:
        assert lib.count_tiles(8) == 4
        stored = {h for (h,) in lib.conn.execute("SELECT hash FROM tiles")}
    expect = {t.hash for t in generate(GenParams.make(8, None, 15), 4, SEED)}
    assert stored == expect
    r = run_tiles(
        "library",
        "generate",
        "--n",
        "8",
        "--count",
        "4",
        "--seam-mask",
        "15",
        "--seed",
        SEED.hex(),
        "--workers",
        "2",
        env={"TILES_LIBRARY": str(path)},
    )
    assert r.returncode == 0 and "0 new, 4 already" in r.stdout
    assert run_tiles("library", "verify", "--library", str(path)).returncode == 0


@pytest.mark.parametrize(
    "bad",
    [
        ["--n", "7", "--count", "2"],
        ["--n", "18", "--count", "2"],
        ["--n", "6", "--count", "0"],
        ["--n", "6", "--count", "2", "--seam-mask", "16"],
        ["--n", "6", "--count", "2", "--m-max", "0"],
        ["--n", "6", "--count", "2", "--workers", "0"],
        ["--n", "6", "--count", "2", "--seed", "xyz"],
        ["--n", "6", "--count", "2", "--min-ladder", "9"],
        ["--n", "6", "--count", "2", "--max-ladder", "6"],
        ["--n", "6", "--count", "2", "--min-ladder", "4", "--max-ladder", "3"],
        ["--n", "6", "--count", "2", "--level", "5"],
        ["--n", "6", "--count", "2", "--level", "2", "--max-ladder", "1"],
        ["--n", "six", "--count", "2"],
        ["--count", "2"],
    ],
)
def test_cli_bad_argument_exits_2_and_writes_nothing(tmp_path, bad):
    path = tmp_path / "lib.sqlite"
    r = run_tiles("library", "generate", *bad, "--library", str(path))
    assert r.returncode == 2, (bad, r.stdout, r.stderr)
    assert r.stderr.startswith("tiles: error:") and r.stderr.count("\n") == 1
    assert not path.exists()


def test_cli_prints_the_m_limit_it_applies_and_levels_rate_as_asked(tmp_path):
    path = tmp_path / "lib.sqlite"
    r = run_tiles("library", "generate", "--n", "10", "--count", "3", "--seed", SEED.hex(), "--library", str(path))
    assert r.returncode == 0, r.stderr
    assert "m = 1 (seam_mask 0 pins nothing; m_max 3 unused)" in r.stdout and "m_max 3," not in r.stdout
    r = run_tiles(
        "library",
        "generate",
        "--n",
        "10",
        "--count",
        "3",
        "--seam-mask",
        "15",
        "--seed",
        SEED.hex(),
        "--library",
        str(path),
    )
    assert "m <= 3, seam_mask 15" in r.stdout
    r = run_tiles(
        "library", "generate", "--n", "8", "--count", "5", "--level", "3", "--seed", SEED.hex(), "--library", str(path)
    )
    assert r.returncode == 0 and "level 3" in r.stdout, r.stderr
    with Library.open(path) as lib:
        assert [lv for (lv,) in lib.conn.execute("SELECT ladder FROM tiles WHERE n = 8")] == [3] * 5
