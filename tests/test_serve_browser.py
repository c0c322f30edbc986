"""The play page in a real headless browser (Debian's chromium driven by playwright): a person loads a
G=61 daily board, starts a run, opens the seed tile by clicking it on the canvas, fills the empty cells
by clicking them, submits, sees the reward; then does the same for a neighbour of the seed tile.

`scripts/test.sh` installs chromium with apt when it is missing; without it this test is skipped
locally and fails under CI (CI=true), so a missing browser is never a silent pass there.
"""

from __future__ import annotations

import os
import shutil

import httpx
import pytest

from serve_support import daily_g61, serving

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
DAY = "2026-11-29"


@pytest.fixture(scope="module")
def g61(tmp_path_factory):
    return daily_g61(tmp_path_factory, "g61", DAY, bytes.fromhex("cd" * 32))


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (scripts/test.sh installs it with apt)")
        pytest.skip("chromium is not installed (apt-get install chromium, or run scripts/test.sh)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        br = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield br
        br.close()


def solve_in_page(page, base, tile):
    """Open ``tile`` by clicking its centre on the canvas, fill every empty cell by clicking, submit."""
    page.evaluate(f"tilesPlay.focusTile({tile})")
    t = page.evaluate(f"tilesPlay.state.board.tiles[{tile}]")
    pt = page.evaluate(f"tilesPlay.cellToClient({t['y0'] + t['n'] // 2}, {t['x0'] + t['n'] // 2})")
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_function(f"tilesPlay.state.puzzle && tilesPlay.state.puzzle.tile === {tile}")
    assert page.inner_text("#tiletitle").startswith(f"Tile #{tile}") and "playable" in page.inner_text("#tiletitle")
    # the answer comes from the API's reveal (the day is over), as a person would read it off a paper
    sol = httpx.get(f"{base}/api/v1/days/{DAY}/tiles/{tile}/solution").json()["cells"]
    puzzle = page.evaluate("tilesPlay.state.puzzle.puzzle")
    assert len(puzzle) == t["n"] ** 2 and "." in puzzle
    cells = page.query_selector_all("#grid .c")
    for i, ch in enumerate(puzzle):
        if ch == ".":
            cells[i].click(click_count=1 if sol[i] == "0" else 2)
    assert page.evaluate("tilesPlay.state.entry.join('')") == sol
    assert page.is_enabled("#submit")
    page.click("#submit")
    page.wait_for_function(f"tilesPlay.state.solved.has({tile})")
    return t["n"] ** 2


@pytest.mark.slow
def test_a_person_plays_the_seed_tile_and_a_neighbour(g61, browser, tmp_path):
    d, manifest = g61
    with serving(d / "lib.sqlite", tmp_path / "runs.sqlite", [manifest]) as base:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "/")
        page.wait_for_function("window.tilesPlay && window.tilesPlay.ready")
        assert "G=61" in page.inner_text("#day")
        page.fill("#player", "ann")
        page.click("#newrun")
        page.wait_for_function("tilesPlay.state.run !== null && tilesPlay.state.frontier.size === 1")
        seed = page.evaluate("tilesPlay.state.board.seed_tile")
        got = solve_in_page(page, base, seed)
        assert page.inner_text("#verdict").startswith(f"Correct! +{got}")
        assert page.inner_text("#reward") == str(got)
        nbr = page.evaluate("[...tilesPlay.state.frontier].sort((a, b) => a - b)[0]")
        got2 = solve_in_page(page, base, nbr)
        assert page.inner_text("#verdict").startswith(f"Correct! +{got2}")
        assert page.inner_text("#reward") == str(got + got2) and page.inner_text("#solved") == "2"
        run = page.evaluate("tilesPlay.state.run")
        score = httpx.get(f"{base}/api/v1/runs/{run}").json()
        assert (score["reward"], score["solved"], score["player"]) == (got + got2, 2, "ann")
        page.screenshot(path=str(tmp_path / "played.png"))
        assert errors == []
