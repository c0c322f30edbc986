"""docs/AGENTS.md's examples run as written: each ```python block, with only the service's address and
the day's files put in for the literal ones (and fewer training steps), against a real `tiles referee serve` of a G=61
day. The
client and the Gym examples must clear the day (reward = Σ n² of its tiles); the MCP one must list
the tools and read the seed tile's puzzle."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_tiles
from needs import need_module
from serve_support import daily_g61, serving

from referee.manifest import from_json
from referee.service import mcp_tools

DOC = Path(__file__).resolve().parents[1] / "docs" / "AGENTS.md"
DAY = "2026-11-29"


def examples() -> dict[str, list[str]]:
    """The python blocks of AGENTS.md by the heading of their section, in order."""
    out = {}
    for block in re.split(r"^## ", DOC.read_text(), flags=re.M)[1:]:
        codes = re.findall(r"```python\n(.*?)```", block, flags=re.S)
        if codes:
            out[block.splitlines()[0].strip()] = codes
    return out


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    d, manifest = daily_g61(tmp_path_factory, "doc61", DAY, bytes.fromhex("cd" * 32))
    total = sum((s + 1) ** 2 for _x, _y, s in from_json(manifest.read_text()).packing.squares)
    with serving(d / "lib.sqlite", d / "runs.sqlite", [manifest]) as base:
        yield base, d / "lib.sqlite", manifest, total


def run_example(code: str, day) -> str:
    base, lib, manifest, _ = day
    code = (
        code.replace("http://127.0.0.1:8000", base)
        .replace("out/2026-11-29.json", str(manifest))
        .replace("out/tiles.sqlite", str(lib))
        .replace("learn(20_000)", "learn(256)")
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_the_doc_has_the_three_examples_and_each_is_short():
    ex = examples()
    assert {k: len(v) for k, v in ex.items()} == {
        "The Python client": 1,
        "The Gymnasium environments": 3,
        "Past days as a dataset, and days of your own": 1,
        "MCP tools for LLM agents": 1,
    }
    assert all(len(code.strip().splitlines()) <= 13 for codes in ex.values() for code in codes)


def test_the_client_example_clears_the_day(day):
    out = run_example(examples()["The Python client"][0], day)
    assert f"reward={day[3]}" in out and "player='my-agent'" in out


def test_the_gym_example_clears_the_day(day):
    out = run_example(examples()["The Gymnasium environments"][0], day)
    total, solved = out.split()
    assert int(total) == day[3] and int(solved) == len(from_json(day[2].read_text()).packing.squares)


def test_the_stable_baselines3_example_trains_with_no_wrapper(day):
    need_module("sb3_contrib", "the rl extra (pip install -e '.[rl]') is not installed")
    run_example(examples()["The Gymnasium environments"][1], day)  # 256 steps instead of 20,000


def test_the_dataset_example_reads_an_export(day, tmp_path):
    _, lib, manifest, _ = day
    out = tmp_path / "data"
    r = run_tiles("daily", "export", "--from", DAY, "--to", DAY, "--out", out, "-L", lib)
    assert r.returncode == 0, r.stderr
    code = examples()["Past days as a dataset, and days of your own"][0].replace("data/", f"{out}/")
    printed = run_example(code, day)
    assert printed.split()[0] == str(len(from_json(manifest.read_text()).packing.squares))


def test_the_mcp_example_lists_the_tools_and_reads_a_puzzle(day):
    out = run_example(examples()["MCP tools for LLM agents"][0], day).splitlines()
    assert out[0] == str(list(mcp_tools.TOOL_OPERATIONS))  # every tool, in the order the server lists them
    n, puzzle = out[1].split()
    assert len(puzzle) == int(n) ** 2 and set(puzzle) <= set("01.") and "." in puzzle


def test_the_fresh_boards_example_shows_board_zero_the_same_each_time(day):
    first, again = (run_example(examples()["The Gymnasium environments"][2], day) for _ in range(2))
    frontier, puzzle = first.split()
    assert first == again and frontier == "1" and set(puzzle) <= set("01.") and "." in puzzle
