"""The shell examples of the README, CONTRIBUTING and docs/setup.md run as printed: every pytest line
(and `bash scripts/test.sh ARGS`, which hands ARGS to pytest) selects at least one test, every check
line exits 0. The quickstart and the README's "commands used most" run in tests/test_readme_commands.py."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("README.md", "CONTRIBUTING.md", "docs/setup.md")
ELSEWHERE = {"bash scripts/quickstart.sh": "tests/test_readme_commands.py runs it on a clean copy"}


def examples(text: str) -> list[str]:
    """The commands a page shows: each line of its fenced blocks that calls the repo's scripts or
    .venv's tools (comments dropped), and each inline `bash scripts/…` or `.venv/bin/…` span."""
    found = []
    readme_block = text.split("## The commands used most", 1)
    for block in re.findall(r"```(?:sh)?\n(.*?)```", text, re.S):
        if len(readme_block) > 1 and block in readme_block[1].split("```sh\n", 1)[-1][: len(block) + 1]:
            continue  # "The commands used most": run after the quickstart, in test_readme_commands
        found += [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()]
    found += re.findall(r"`((?:bash scripts/|\.venv/bin/)[^`]+)`", text)
    return [c for c in found if c.startswith(("bash scripts/", ".venv/bin/"))]


def all_examples() -> list[str]:
    seen: list[str] = []
    for page in PAGES:
        for command in examples((ROOT / page).read_text("utf-8")):
            if command not in seen:
                seen.append(command)
    return seen


def as_collection(command: str) -> list[str] | None:
    """The pytest call behind a test command, collecting only; None for a command that is no pytest."""
    words = shlex.split(command)
    if words[:2] == ["bash", "scripts/test.sh"]:
        return [sys.executable, "-m", "pytest", *words[2:], "--collect-only"]
    if words[:3] == [".venv/bin/python", "-m", "pytest"]:
        return [sys.executable, "-m", "pytest", *words[3:], "--collect-only"]
    return None


def test_the_pages_show_the_commands_this_file_runs():
    commands = all_examples()
    assert '.venv/bin/python -m pytest -m "not slow"' in commands
    assert any(c.startswith("bash scripts/test.sh -") for c in commands)
    assert ".venv/bin/mypy" in commands


@pytest.mark.parametrize("command", all_examples())
def test_each_example_runs_as_printed(command):
    if command in ELSEWHERE:
        return  # ELSEWHERE says which test runs it
    words = shlex.split(command)
    assert "-q" not in words, f"{command}: pyproject's addopts has -q already; a second hides the summary"
    pytest_call = as_collection(command)
    argv = pytest_call or [str(ROOT / words[0]) if words[0].startswith(".venv/") else words[0], *words[1:]]
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{command}: exit {r.returncode}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}"
    if pytest_call is not None:
        got = re.search(r"(\d+)(?:/\d+)? tests? collected", r.stdout)
        assert got and int(got.group(1)) > 0, r.stdout[-500:]
