"""The tree's own checks (``scripts/test.sh`` runs them before the tests; CONTRIBUTING.md): ruff's lint,
ruff's format and mypy, each with the project's settings from pyproject.toml. Each is shown to fail
on one deliberately bad line written into a copy of a real module, and to pass on the copy as it
was — so a check that could never fail (a wrong path, an empty file list, a config that selects
nothing) is caught here, not trusted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MODULE = "referee/service/asked.py"  # a small real module, typed, with a docstring


def _tool(name: str) -> str:
    exe = BIN / name
    if not exe.exists():
        pytest.fail(f"{name} is not installed in {BIN}: `pip install -e '.[test]'` installs it")
    return str(exe)


@pytest.fixture
def copy(tmp_path):
    """A copy of the project's settings and of one module, in a package of the same name."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    dest = tmp_path / "referee" / "service" / "asked.py"
    dest.parent.mkdir(parents=True)
    for pkg in (tmp_path / "referee", dest.parent):
        (pkg / "__init__.py").write_text("")
    shutil.copy(ROOT / MODULE, dest)
    return tmp_path, dest


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


def _mypy(cwd: Path, target: Path) -> subprocess.CompletedProcess:
    return _run([_tool("mypy"), "--config-file", str(cwd / "pyproject.toml"), "--no-incremental", str(target)], cwd)


def test_ruff_lint_fails_on_a_bad_line_and_passes_without_it(copy):
    root, mod = copy
    ok = _run([_tool("ruff"), "check", str(mod)], root)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    mod.write_text(mod.read_text() + "\nimport os\n")  # F401: imported, never used
    bad = _run([_tool("ruff"), "check", str(mod)], root)
    assert bad.returncode == 1 and "F401" in bad.stdout, bad.stdout


def test_ruff_format_fails_on_a_badly_formatted_line_and_passes_without_it(copy):
    root, mod = copy
    ok = _run([_tool("ruff"), "format", "--check", str(mod)], root)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    mod.write_text(mod.read_text() + "\nX = {  'a':1 }\n")
    bad = _run([_tool("ruff"), "format", "--check", str(mod)], root)
    assert bad.returncode == 1 and "would be reformatted" in bad.stdout, bad.stdout


def test_mypy_fails_on_a_type_mistake_in_an_untyped_function_and_passes_without_it(copy):
    """check_untyped_defs is on: a mistake inside a function with no annotations is still found."""
    root, mod = copy
    ok = _mypy(root, mod)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    mod.write_text(mod.read_text() + "\n\ndef _oops():\n    return Asked().pending(3)\n")  # an int for a str
    bad = _mypy(root, mod)
    assert bad.returncode == 1 and "arg-type" in bad.stdout, bad.stdout


def test_the_test_command_runs_all_three_before_the_tests():
    script = (ROOT / "scripts" / "test.sh").read_text()
    checks = [".venv/bin/ruff check", ".venv/bin/ruff format --check", ".venv/bin/mypy"]
    at = [script.find(c) for c in checks]
    assert all(i >= 0 for i in at), at
    assert max(at) < script.find("-m pytest") and "set -euo pipefail" in script  # a finding stops it


def _packages() -> list[str]:
    """The shipped packages, read from the tree: every top-level folder with an ``__init__.py``."""
    return sorted(p.parent.name for p in ROOT.glob("*/__init__.py") if p.parent.name not in ("tests", "scripts"))


@pytest.mark.slow
def test_the_checks_as_the_test_command_runs_them_cover_every_package(tmp_path):
    """`ruff check .` and `mypy` exactly as scripts/test.sh runs them (mypy's own `files` list, no
    path given) on a copy of the tree: clean, then with one bad line in a module of every shipped
    package, each of which must be named. A package left out of `files` (or a ruff exclude that
    swallows one) fails here."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True)
    for name in listed.stdout.splitlines():
        if (name.endswith((".py", ".pyi", ".toml")) or name.endswith("py.typed")) and (ROOT / name).is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, tmp_path / name)
    packages = _packages()
    assert {"tilelib", "players", "tiles_cli"} <= set(packages)
    ok = _run([_tool("ruff"), "check", "."], tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    planted = {}
    for pkg in packages:
        mod = tmp_path / pkg / "__init__.py"
        mod.write_text(mod.read_text() + "\n\nimport os\n\n\ndef _oops():\n    return len(3)\n")  # F401, arg-type
        planted[pkg] = f"{pkg}/__init__.py"
    lint = _run([_tool("ruff"), "check", "."], tmp_path)
    assert lint.returncode == 1 and all(f in lint.stdout for f in planted.values()), lint.stdout[-3000:]
    types = _run([_tool("mypy")], tmp_path)
    assert types.returncode == 1, types.stdout[-3000:]
    assert sorted(p for p, f in planted.items() if f"{f}:" not in types.stdout) == [], types.stdout[-3000:]
