"""The one rule for the C twins (``tilelib.native``): a missing or stale extension is one
single-line ``TwinWarning`` per process, the Python reference then gives the same results (the
engine, which has none by default, fails with ``NotBuilt``), and the built twins are current.
The stitcher's blocked-twin run is ``test_stitch_kernel.test_pinned_digest_without_the_extension``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from types import SimpleNamespace

import pytest

from tilelib import native
from tilelib.errors import NotBuilt, exit_code
from tilelib.native import TwinWarning, load_twin, require_twin, source_digest, stale_reason

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWINS = ("engine._kernel", "tilelib._sym", "stitcher._core")


def blocked(name: str, code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter where importing the extension ``name`` fails."""
    prog = f"import sys\nsys.modules[{name!r}] = None\nsys.path.insert(0, 'tests')\n{code}"
    return subprocess.run([sys.executable, "-c", prog], cwd=ROOT, capture_output=True, text=True, timeout=300)


def warning_lines(stderr: str, name: str) -> list[str]:
    return [line for line in stderr.splitlines() if "TwinWarning" in line and f"C extension {name} " in line]


@pytest.mark.parametrize("name", TWINS)
def test_every_twin_is_built_from_the_sources_beside_it(name):
    """A .c edited without `pip install -e .` fails here (and warns at every import)."""
    import importlib

    mod = importlib.import_module(name)
    assert mod.SOURCE_DIGEST == source_digest(ROOT, mod.SOURCES.split(","))
    assert stale_reason(mod) is None


def test_stale_missing_sources_and_old_builds(tmp_path):
    (tmp_path / "a.c").write_text("int x;\n")
    files = "a.c"
    good = SimpleNamespace(SOURCES=files, SOURCE_DIGEST=source_digest(tmp_path, ["a.c"]))
    assert stale_reason(good, tmp_path) is None
    (tmp_path / "a.c").write_text("int y;\n")
    assert "other sources" in stale_reason(good, tmp_path)
    assert stale_reason(SimpleNamespace(), tmp_path).startswith("was built before source digests")
    assert stale_reason(SimpleNamespace(SOURCES="gone.c", SOURCE_DIGEST="x"), tmp_path) is None


def test_a_missing_twin_warns_once_per_process_on_one_line():
    name = "tilelib._no_such_twin_for_the_test"
    native._warned.discard(name)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert load_twin(name) is None
        assert load_twin(name) is None
    assert len(got) == 1 and got[0].category is TwinWarning
    text = warnings.formatwarning(got[0].message, got[0].category, got[0].filename, got[0].lineno)
    assert len(text.strip().splitlines()) == 1 and "pip install -e ." in text
    with pytest.raises(NotBuilt, match=name) as e:
        require_twin(None, name)
    assert exit_code(e.value) == 1
    assert require_twin(native, "x") is native


def test_tiles_without_the_sym_twin_warn_once_and_hash_the_same():
    code = (
        "import json, numpy as np\n"
        "from support import random_givens, random_solution\n"
        "from tilelib.tile import Tile\n"
        "rng = np.random.default_rng(7)\n"
        "out = []\n"
        "for n in (6, 8, 12, 16):\n"
        "    for seam in (0, 5, 15):\n"
        "        t = Tile.from_grids(random_solution(n, rng), random_givens(n, rng), seam)\n"
        "        _, tc = t.canonical()\n"
        "        out.append([t.hash, tc, t.transform(11).solution.hex()])\n"
        "print(json.dumps(out))\n"
    )
    without = blocked("tilelib._sym", code)
    assert without.returncode == 0, without.stderr[-2000:]
    assert len(warning_lines(without.stderr, "tilelib._sym")) == 1, without.stderr
    with_c = subprocess.run(
        [sys.executable, "-c", "import sys\nsys.path.insert(0, 'tests')\n" + code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert with_c.returncode == 0 and not warning_lines(with_c.stderr, "tilelib._sym"), with_c.stderr
    assert json.loads(without.stdout) == json.loads(with_c.stdout)


def test_the_engine_without_its_kernel_warns_once_then_refuses_in_one_line():
    r = blocked(
        "engine._kernel",
        (
            "from engine import count_rows\n"
            "assert count_rows(4, [0] * 4, [0] * 4, 2, impl='python')[0] == 2\n"
            "from tiles_cli.app import main\n"
            "main(['solve', '--givens', '.' * 36])\n"
        ),
    )
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(warning_lines(r.stderr, "engine._kernel")) == 1 and len(lines) == 2, r.stderr
    assert lines[1].startswith("tiles: error: C extension engine._kernel is not built"), r.stderr


def _tiles_without(names: tuple[str, ...], argv: list[str], cwd: str) -> subprocess.CompletedProcess:
    """``tiles ARGV`` in a fresh interpreter where importing each extension of ``names`` fails."""
    block = "".join(f"sys.modules[{n!r}] = None\n" for n in names)
    prog = f"import sys\n{block}from tiles_cli.app import main\nmain({argv!r})"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILES_")} | {"TILES_CONFIG": ""}
    env["PYTHONPATH"] = ROOT
    return subprocess.run([sys.executable, "-c", prog], cwd=cwd, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize(
    "argv, warns, code",
    [
        (["--help"], True, 0),  # lists every command: loads every command module
        (["library", "stats"], True, 0),
        (["solve", "--givens", "0" + "." * 35], True, 1),  # the engine's kernels have no Python twin
        (["config"], False, 0),
        (["init", "--out", "days"], False, 0),
        (["pack", "--size", "61", "--seed", "a" * 64], False, 0),
    ],
)
def test_which_commands_say_a_twin_is_missing(tmp_path, argv, warns, code):
    """The README's sentence: each command that loads a missing twin names it in one line per twin;
    `tiles config`, `tiles init` and `tiles pack` load none."""
    assert (
        subprocess.run(
            [sys.executable, "-m", "tiles_cli.app", "library", "init", "-L", str(tmp_path / "tiles.sqlite")],
            cwd=ROOT,
            capture_output=True,
            env={**os.environ, "TILES_CONFIG": ""},
        ).returncode
        == 0
    )
    r = _tiles_without(TWINS, argv, str(tmp_path))
    assert r.returncode == code, r.stderr[-2000:]
    if code:
        assert r.stderr.splitlines()[-1].endswith("rebuild with `pip install -e .`"), r.stderr
    lines = [line for line in r.stderr.splitlines() if "TwinWarning" in line]
    named = [name for name in TWINS if warning_lines(r.stderr, name)]
    assert (len(lines) > 0) == warns, r.stderr
    assert len(lines) == len(named)  # one line per twin, never two for one
