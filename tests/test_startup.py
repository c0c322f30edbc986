"""Start-up: each command imports only what it needs (timings are in scripts/bench_startup.py).

`tiles --help` must not load numpy, SQLite helpers, CP-SAT, boto3, rich or the
pipeline packages; `tiles solve` runs on row ints with the C kernel and loads
none of the heavy libraries either, and `tiles library generate` loads only the
generator and the store. Each check runs in a fresh interpreter.
"""

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.report import parse_puzzle
from tilelib import plugins
from tilelib.bits import Puzzle
from tilelib.errors import BadInput

HEAVY_LIBS = ("numpy", "pandas", "ortools", "boto3", "botocore", "rich", "pydantic", "PIL")
# ``daily.options`` and ``referee.service.options`` (the build's and the service's options, declared
# once, with their defaults and help) are what the CLI reads of ``daily`` and ``referee`` at start-up:
# any other module of a pipeline package counts as loaded (reported by its package's name)
PIPELINE = ("generator", "referee", "stitcher", "remote", "packers", "daily.build", "tilelib.store")
LIGHT = ("referee", "referee.service", "referee.service.options", "referee.service.quota")


def _loaded_after(argv: list[str]) -> set[str]:
    """Run the CLI in a fresh interpreter with argv; return the heavy modules it loaded."""
    code = (
        "import json, sys\n"
        "from tiles_cli.app import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        f"names, light = {list(HEAVY_LIBS + PIPELINE)!r}, {list(LIGHT)!r}\n"
        "heavy = [m for m in sys.modules if m not in light]\n"
        "hit = lambda n: any(m == n or m.startswith(n + '.') for m in heavy)\n"
        "print(json.dumps([n for n in names if hit(n)]), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["library", "--help"],
        ["referee", "--help"],
        ["daily", "--help"],
        ["library", "generate", "--help"],
        ["solve", "--help"],
        ["pack", "--help"],
    ],
)
def test_help_loads_no_heavy_module(argv):
    assert _loaded_after(argv) == set()


def test_solve_loads_no_heavy_library():
    loaded = _loaded_after(["solve", "--givens", "0101.." * 6])
    assert loaded == set(), loaded


def test_a_command_still_loads_what_it_uses(tmp_path):
    """The checks here can fail: `library init` really needs the store, and `pack` numpy
    (the packers work on arrays)."""
    assert "tilelib.store" in _loaded_after(["library", "init", "-L", str(tmp_path / "x.sqlite")])
    assert {"numpy", "packers"} <= _loaded_after(["pack", "--size", "31", "--seed", "ab" * 32])


@pytest.mark.parametrize("n,level", [(6, 0), (10, 0), (16, 0), (12, 3)])
def test_generate_loads_no_heavy_library(tmp_path, n, level):
    """`library generate` runs on row ints and the C kernels from solution to insert: no numpy
    (the column filter, the canonical form, the edges and the rating are C or int code), no
    pandas (the store inserts with sqlite3), no CP-SAT (no boundary is fixed)."""
    lib = tmp_path / "g.sqlite"
    loaded = _loaded_after(
        [
            "library",
            "generate",
            "--n",
            str(n),
            "--count",
            "5",
            "--level",
            str(level),
            "--seed",
            "cd" * 32,
            "-L",
            str(lib),
        ]
    )
    assert loaded == {"generator", "tilelib.store"}, loaded
    assert lib.exists()


def test_one_command_group_is_the_whole_group():
    """`modules_for` loads only the first word's modules: each group must then hold the same
    commands as in the full CLI (a module that broke the naming rule would lose its commands)."""
    import typer.main

    from tiles_cli import app as cli

    full = typer.main.get_command(cli.build_app())
    for name, group in full.commands.items():
        mods = cli.modules_for([name])
        assert mods != plugins.modules(plugins.COMMAND), name
        code = (
            "import json, typer.main\n"
            "from tiles_cli import app as cli\n"
            f"cmd = typer.main.get_command(cli.build_app({mods!r}))\n"
            f"g = cmd.commands[{name!r}]\n"
            "print(json.dumps(sorted(getattr(g, 'commands', {}))))\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == sorted(getattr(group, "commands", {})), name
    every = plugins.modules(plugins.COMMAND)
    assert cli.modules_for(["--help"]) == cli.modules_for([]) == cli.modules_for(["nosuch"]) == every


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
    from tiles_cli.options import DEFAULT_PACKER, PACKER_NAMES

    assert DEFAULT_PACKER == packers.DEFAULT_PACKER
    assert PACKER_NAMES == " | ".join(packers.PACKERS)  # the --packer help names every packer


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
