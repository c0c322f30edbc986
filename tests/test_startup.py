"""Start-up: each command imports only what it needs (timings are in scripts/bench_startup.py).

`tiles --help` must not load numpy, SQLite helpers, CP-SAT, boto3, rich or the
pipeline packages; `tiles solve` runs on row ints with the C kernel and loads
none of the heavy libraries either. Each check runs in a fresh interpreter.
"""

import json
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

from engine.report import parse_puzzle
from tilelib.bits import Puzzle
from tilelib.errors import BadInput

HEAVY_LIBS = ("numpy", "pandas", "sqlite_utils", "ortools", "boto3", "botocore", "rich", "pydantic", "PIL")
PIPELINE = ("generator", "referee", "stitcher", "remote", "packers", "daily", "tilelib.store")


def _loaded_after(argv: list[str]) -> set[str]:
    """Run the CLI in a fresh interpreter with argv; return the heavy modules it loaded."""
    code = (
        "import json, sys\n"
        "from tiles_cli.app import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        f"names = {list(HEAVY_LIBS + PIPELINE)!r}\n"
        "print(json.dumps([m for m in names if m in sys.modules]), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--help"], ["library", "--help"], ["referee", "--help"], ["daily", "--help"],
                                  ["library", "generate", "--help"], ["solve", "--help"], ["pack", "--help"]])
def test_help_loads_no_heavy_module(argv):
    assert _loaded_after(argv) == set()


def test_solve_loads_no_heavy_library():
    loaded = _loaded_after(["solve", "--givens", "0101.." * 6])
    assert loaded == set(), loaded


def test_a_command_still_loads_what_it_uses(tmp_path):
    """The check above can fail: `library init` really needs the store (and numpy, through tiles)."""
    loaded = _loaded_after(["library", "init", "-L", str(tmp_path / "x.sqlite")])
    assert {"numpy", "tilelib.store"} <= loaded


cells = st.text(alphabet="01.", min_size=0, max_size=300)


@given(text=st.one_of(cells, st.sampled_from(["0" * 36, "." * 64, "01.x" * 9, " 0101..0101.. ", "1" * 4])))
def test_row_parser_matches_the_numpy_parser(text):
    try:
        want = Puzzle.parse(text)
    except BadInput as e:
        with pytest.raises(BadInput) as got:
            parse_puzzle(text)
        assert str(got.value) == str(e)
        return
    p = parse_puzzle(text)
    assert p.n == want.n
    assert p.row_masks() == want.row_masks()


def test_pack_default_is_the_packers_default():
    import packers
    from tiles_cli.pack import DEFAULT_PACKER

    assert DEFAULT_PACKER == packers.DEFAULT_PACKER


def test_main_registers_the_commands_once_per_process():
    """``main`` called again in one process (the in-process test runner does so hundreds of times)
    must not register every command again: the app grew by one copy per call, and each call
    rebuilt all copies (0.75 s per call after 120 calls)."""
    from cli_support import run_tiles
    from tiles_cli.app import app

    assert run_tiles("solve", "--givens", "." * 36).returncode == 0
    sizes = len(app.registered_commands), len(app.registered_groups)
    for _ in range(3):
        assert run_tiles("solve", "--givens", "." * 36).returncode == 0
    assert (len(app.registered_commands), len(app.registered_groups)) == sizes
    assert sorted(g.name for g in app.registered_groups) == ["daily", "library", "referee"]
