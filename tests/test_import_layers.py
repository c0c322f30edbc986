"""The import rules of docs/ARCHITECTURE.md, read from the source itself (``ast``, nothing imported):

- **layers**: a package imports only packages of a lower layer (``LAYERS``, lowest first; two
  packages of one layer import neither each other);
- **no cycle inside a package**: its modules' imports form a DAG.

Every import statement counts, wherever it stands: at module level, inside a function (a lazy
import is still a dependency) and under ``if TYPE_CHECKING:`` (a type named from a module is a
dependency of the reader). The checker is itself checked on small trees it must reject.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Lowest first. A package may import the packages of the layers below its own.
LAYERS = (
    ("tilelib",),
    ("engine", "packers"),
    ("generator",),
    ("stitcher", "referee"),
    ("trust",),  # the library's own proofs (checks, repair): below every package that reads a pulled or local file
    ("remote",),
    ("daily",),
    ("players",),  # the players' side builds its training boards with the nightly build (players.boards)
    ("tiles_cli",),
)
LAYER_OF = {p: k for k, names in enumerate(LAYERS) for p in names}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, root: Path, modules) -> set[str]:
    """The modules (of ``modules``) an import statement of ``path`` names, relative imports
    resolved: ``import a.b`` names ``a.b``; ``from a import b`` names ``a.b`` if that is a module,
    else ``a`` (b is a name defined there)."""
    mod = module_name(path, root)
    package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            out.update(f"{name}.{a.name}" if f"{name}.{a.name}" in modules else name for a in node.names)
    return out & set(modules)


def graph(root: Path, packages) -> dict[str, set[str]]:
    """module -> the modules of ``packages`` it imports (itself left out)."""
    files = {module_name(p, root): p for pkg in packages for p in (root / pkg).rglob("*.py")}
    return {m: imported(p, root, files) - {m} for m, p in files.items()}


def upward(g: dict[str, set[str]]) -> list[str]:
    """'a -> b' for every import of a package of the same or a higher layer."""
    bad = []
    for m, targets in sorted(g.items()):
        src = m.split(".")[0]
        for t in sorted(targets):
            dst = t.split(".")[0]
            if dst != src and LAYER_OF[dst] >= LAYER_OF[src]:
                bad.append(f"{m} -> {t}")
    return bad


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles among modules of one package (one per strongly connected component of
    more than one module; a module importing itself is not an import)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w.split(".")[0] != v.split(".")[0]:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_the_checker_finds_a_cycle_through_type_checking_lazy_and_relative_imports(tmp_path):
    root = _tree(
        tmp_path,
        {
            "tilelib/__init__.py": "",
            "tilelib/a.py": "from tilelib import b\n",
            "tilelib/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import X\n",
            "tilelib/c.py": "def f():\n    import tilelib.a\n",
            "tilelib/d.py": "from tilelib.a import thing\n",
        },
    )
    assert cycles(graph(root, ["tilelib"])) == [["tilelib.a", "tilelib.b", "tilelib.c"]]


def test_the_checker_finds_imports_up_and_across_a_layer(tmp_path):
    root = _tree(
        tmp_path,
        {
            "tilelib/__init__.py": "",
            "engine/__init__.py": "",
            "packers/__init__.py": "",
            "tilelib/x.py": "def f():\n    from engine import count\n",
            "engine/count.py": "from packers import p\nimport tilelib.x\n",
            "engine/lines.py": "from packers import SIZES\nfrom engine import count\n",
            "packers/p.py": "import tilelib\n",
        },
    )
    got = upward(graph(root, ["tilelib", "engine", "packers"]))
    assert got == ["engine.count -> packers.p", "engine.lines -> packers", "tilelib.x -> engine.count"]


def test_every_package_is_on_a_layer():
    found = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "scripts"}
    assert found == set(LAYER_OF), "a package missing from LAYERS, or a layer naming no package"


@pytest.fixture(scope="module")
def project_graph():
    return graph(ROOT, list(LAYER_OF))


def test_no_package_imports_one_of_its_own_layer_or_above(project_graph):
    assert upward(project_graph) == []


def test_no_import_cycle_inside_a_package(project_graph):
    assert cycles(project_graph) == []
