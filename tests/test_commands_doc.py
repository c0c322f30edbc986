"""docs/commands.md is made from the CLI (scripts/make_commands_doc.py): it is current, it covers every
option of every command (read back from the page, not from the generator), it names every variable
the code reads, and the check fails when an option changes."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import typer

from tiles_cli.app import build_app

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "commands.md"
SHIPPED = "tilelib engine generator packers stitcher referee remote players daily tiles_cli".split()
# between the service's parent process and its workers, never set by a person
INTERNAL = {"TILES_SERVE_OPTIONS"}


def _check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "make_commands_doc.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
        timeout=120,
    )


def test_the_page_is_what_the_cli_says():
    r = _check(ROOT)
    assert r.returncode == 0, r.stderr


def test_the_check_fails_when_an_option_changes(tmp_path):
    """In a copy of the tree, one option's default is changed in the code: the committed page is stale."""
    copy = tmp_path / "tree"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True)
    for name in files.stdout.splitlines():
        if name.endswith(".py") or name.startswith("docs/"):
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            if (ROOT / name).is_file():
                shutil.copy2(ROOT / name, copy / name)
    assert _check(copy).returncode == 0, _check(copy).stderr  # the copy alone does not make it stale
    code = copy / "daily" / "options.py"  # where --size's default is declared (the BuildOptions field)
    text = code.read_text()
    assert "    size: int = 1000" in text
    code.write_text(text.replace("    size: int = 1000", "    size: int = 999", 1))
    r = _check(copy)
    assert r.returncode == 1 and "docs/commands.md is stale" in r.stderr, r.stderr


def _sections(page: str) -> dict[str, set[str]]:
    """Each '### tiles …' section of the page and the flags its table lists."""
    out: dict[str, set[str]] = {}
    current = None
    for line in page.splitlines():
        if line.startswith("### tiles "):
            current = line[4:].strip()
            out[current] = set()
        elif current and line.startswith("| `"):
            cell = line.split("|")[1].strip().strip("`")
            out[current] |= {f for f in re.findall(r"(?<![\w-])(-{1,2}[\w-]+)", cell)} or {cell}
    return out


def _tree(command, path=("tiles",)):
    subs = getattr(command, "commands", None)
    if subs is None:
        yield " ".join(path), command
        return
    for name, sub in subs.items():
        yield from _tree(sub, (*path, name))


def test_every_option_of_every_command_is_on_the_page():
    sections = _sections(DOC.read_text("utf-8"))
    seen = 0
    for name, command in _tree(typer.main.get_command(build_app())):
        assert name in sections, f"{name} has no section"
        for p in command.params:
            if p.param_type_name == "argument":
                names = {p.make_metavar(typer.Context(command))}
            else:
                names = set(p.opts) | set(p.secondary_opts)
            assert names <= sections[name], (name, names - sections[name])
            seen += 1
    assert seen > 150  # every command's every parameter was looked at


def _variables() -> set[str]:
    """Every TILES_* name in a string literal of the shipped code (what it reads from the environment)."""
    found: set[str] = set()
    for package in SHIPPED:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    found |= set(re.findall(r"\bTILES_[A-Z0-9_]+\b", node.value))
    return found


def test_every_variable_the_code_reads_is_on_the_page():
    page = DOC.read_text("utf-8")
    names = _variables() - INTERNAL
    assert {"TILES_LIBRARY", "TILES_SECRET", "TILES_S3_ENDPOINT", "TILES_CONFIG", "TILES_RUNS"} <= names
    assert sorted(n for n in names if f"`{n}`" not in page) == []
