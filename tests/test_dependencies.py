"""Declared means used: every runtime dependency in pyproject.toml is imported by the shipped
packages, read from the source (``ast``; lazy imports inside functions count).

A distribution's import names come from the installed metadata (``packages_distributions``), so
``psycopg[binary]`` is ``psycopg`` and ``uvicorn[standard]`` is ``uvicorn``. The checker is itself
checked: a declared name nothing imports is reported.
"""

from __future__ import annotations

import ast
import re
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def declared(pyproject: dict) -> list[str]:
    """The runtime dependencies' distribution names, normalised (no extras, no versions)."""
    return [
        re.split(r"[\[<>=!~; ]", spec, maxsplit=1)[0].strip().lower().replace("_", "-")
        for spec in pyproject["project"]["dependencies"]
    ]


def top_level_imports(paths) -> set[str]:
    """The first component of every module any of ``paths`` imports (absolute imports only)."""
    out: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(Path(path).read_text(), str(path))):
            if isinstance(node, ast.Import):
                out.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out.add(node.module.split(".")[0])
    return out


def unused(dists: list[str], imports: set[str], dist_of: dict[str, list[str]]) -> list[str]:
    """The declared distributions none of whose import names is imported."""
    provides: dict[str, set[str]] = {}
    for module, names in dist_of.items():
        for d in names:
            provides.setdefault(d.lower().replace("_", "-"), set()).add(module)
    return [d for d in dists if not (provides.get(d, {d.replace("-", "_")}) & imports)]


def shipped_sources() -> list[Path]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    tops = {p.split(".")[0] for p in cfg["tool"]["setuptools"]["packages"]}
    return [p for top in sorted(tops) for p in (ROOT / top).rglob("*.py")]


def test_every_declared_dependency_is_imported():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dists = declared(cfg)
    assert "numpy" in dists and "ortools" in dists, dists
    assert unused(dists, top_level_imports(shipped_sources()), packages_distributions()) == []


def test_the_check_reports_a_dependency_nothing_imports(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import numpy\ndef f():\n    from ortools.sat.python import cp_model\n")
    dist_of = {"numpy": ["numpy"], "ortools": ["ortools"], "sqlite_utils": ["sqlite-utils"]}
    imports = top_level_imports([src])
    assert imports == {"numpy", "ortools"}
    assert unused(["numpy", "ortools", "sqlite-utils"], imports, dist_of) == ["sqlite-utils"]
    assert unused(["numpy", "ortools"], imports, dist_of) == []


def test_declared_strips_extras_and_versions():
    cfg = {
        "project": {
            "dependencies": ["psycopg[binary]>=3.2", "uvicorn[standard]>=0.29", "typer>=0.12,<0.29", "Sqlite_Utils>=3"]
        }
    }
    assert declared(cfg) == ["psycopg", "uvicorn", "typer", "sqlite-utils"]
