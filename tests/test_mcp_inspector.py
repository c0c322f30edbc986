"""The MCP server as the MCP Inspector sees it (issue 73): the official Inspector's CLI, installed from
the npm registry on first use (a pinned version, into a cache folder outside the repository), lists
the tools, the prompt and the resources of a real `tiles referee serve`, reads the rules and a tile as
text, and gets the prompt; and the text a model reads shows the tile's view exactly."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from needs import need
from serve_support import daily_g61, serving

from players.client import Client
from referee.service import mcp_tools
from referee.tile_text import RULES, tile_text

DAY = "2026-11-26"
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
CACHE = Path(tempfile.gettempdir()) / "tiles-test-tools" / "mcp-inspector-2.12.0"


def inspector() -> Path:
    """The Inspector's command, installed with npm into ``CACHE`` if it is not there yet."""
    exe = CACHE / "node_modules" / ".bin" / "mcp-inspector"
    if not exe.exists():
        need(None if shutil.which("npm") else "npm is not installed (apt install npm)")
        CACHE.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(CACHE), INSPECTOR],
            capture_output=True,
            text=True,
            timeout=600,
        )
        need(None if r.returncode == 0 and exe.exists() else f"npm could not install {INSPECTOR}: {r.stderr[-300:]}")
    return exe


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    exe = inspector()
    d, manifest = daily_g61(tmp_path_factory, "inspector61", DAY, bytes.fromhex("ab" * 32))
    with serving(d / "lib.sqlite", d / "runs.sqlite", [manifest], log=d / "serve.log") as base:
        yield base, exe


def ask(served, method: str, *args: str) -> dict:
    base, exe = served
    cmd = [str(exe), "--cli", f"{base}/mcp", "--transport", "http", "--method", method, *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    return json.loads(r.stdout)


def test_the_inspector_lists_the_tools_the_prompt_and_the_resources(served):
    tools = {t["name"] for t in ask(served, "tools/list")["tools"]}
    assert tools == set(mcp_tools.TOOL_OPERATIONS)
    (prompt,) = ask(served, "prompts/list")["prompts"]
    assert prompt["name"] == "play_board" and [a["name"] for a in prompt["arguments"]] == ["day"]
    assert [r["uri"] for r in ask(served, "resources/list")["resources"]] == ["tiles://rules"]
    (template,) = ask(served, "resources/templates/list")["resourceTemplates"]
    assert template["uriTemplate"] == "tiles://runs/{run}/tiles/{tile}"


def test_the_inspector_reads_the_rules_a_tile_and_the_prompt(served):
    base, _ = served
    (rules,) = ask(served, "resources/read", "--uri", "tiles://rules")["contents"]
    assert rules["mimeType"] == "text/plain" and rules["text"].startswith(RULES)
    with Client(base) as c:
        run = c.create_run(DAY)
        view = c.run_tile(run.run, 0)
    (tile,) = ask(served, "resources/read", "--uri", f"tiles://runs/{run.run}/tiles/0")["contents"]
    assert tile["text"] == tile_text(view.model_dump())
    called = ask(
        served, "tools/call", "--tool-name", "read_tile_text", "--tool-arg", f"run={run.run}", "--tool-arg", "tile=0"
    )
    assert called["content"][0]["text"] == tile["text"]
    got = ask(served, "prompts/get", "--prompt-name", "play_board", "--prompt-args", f"day={DAY}")
    text = got["messages"][0]["content"]["text"]
    assert f"the board of {DAY}" in text and "read_tile_text" in text and "submit_moves" in text


def test_the_text_shows_the_view_and_nothing_else(served):
    """Each grid row is the view's puzzle row, each source row its masks: no cell the view hides."""
    base, _ = served
    with Client(base) as c:
        run = c.create_run(DAY)
        view = c.run_tile(run.run, c.frontier(run.run).tiles[0])
    lines = tile_text(view.model_dump()).splitlines()
    n = view.n
    start = next(i for i, line in enumerate(lines) if line.startswith("Grid, row by row")) + 1
    grid = ["".join(line.split()) for line in lines[start : start + n]]
    assert "".join(grid) == view.puzzle
    sources = "".join("".join(line.split()) for line in lines[start + n + 1 : start + 2 * n + 1])
    assert sources == "".join(
        "g" if g == "1" else "k" if k == "1" else "." for g, k in zip(view.givens, view.known, strict=True)
    )
    assert lines[-1] == f"Answer with the whole grid: {n * n} characters of 0 and 1, row by row, no spaces."
    assert "playable now" in lines[0] and "(the seed tile)" in lines[0]
