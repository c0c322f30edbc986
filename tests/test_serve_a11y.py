"""The play page for everyone (issue 76), in Debian's chromium through playwright:

- axe-core (the npm registry's build, its integrity checked: ``serve_support.axe_source``) finds no
  serious or critical violation in any state of a run — no run, a tile open, mid-run, the board
  cleared — at a laptop's size and a phone's, in the light scheme and the dark one; the minor and
  moderate ones are counted and printed;
- a person with a keyboard alone starts a run, clears the seed tile and two playable tiles (Tab,
  arrows, digits, Enter), and the reward shows in the page and on the API;
- the accessibility tree (playwright's ARIA snapshot) names every cell of the open puzzle with its
  row, column and value, and holds the verdict as a status that is announced.

``TILES_DOCS_PNG=1`` also writes docs/play-keyboard.png and docs/play-dark.png (docs/play.md).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import httpx
import pytest
from serve_support import axe_source, daily_g61, serving, wait_in_page

DAY = "2026-11-29"
SIZES = {"laptop": (1366, 768), "phone": (390, 844)}
DOCS = Path(__file__).resolve().parent.parent / "docs"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def g61(tmp_path_factory):
    return daily_g61(tmp_path_factory, "a11y", DAY, bytes.fromhex("ab" * 32))


@pytest.fixture(scope="module")
def axe():
    return axe_source()


def solution(base: str, tile: int) -> str:
    return httpx.get(f"{base}/api/v1/days/{DAY}/tiles/{tile}/solution").json()["cells"]


def play_by_api(base: str, run: str, token: str, rounds: int | None = None) -> None:
    """Solve every playable tile of ``run`` through the API, round after round (all of them when
    ``rounds`` is None: the board cleared)."""
    auth = {"Authorization": f"Bearer {token}"}
    done = 0
    while rounds is None or done < rounds:
        tiles = httpx.get(f"{base}/api/v1/runs/{run}/frontier").json()["tiles"]
        if not tiles:
            return
        moves = [{"tile": t, "cells": solution(base, t)} for t in tiles]
        r = httpx.post(f"{base}/api/v1/runs/{run}/moves", json={"moves": moves}, headers=auth)
        assert r.status_code == 200 and all(v["correct"] for v in r.json()["verdicts"]), r.text
        done += 1


def violations(page, axe_js: str) -> list[dict]:
    """axe-core's violations on the page as it is (WCAG 2.0/2.1 A and AA rules and best practices)."""
    page.add_script_tag(content=axe_js)
    return page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations.map(v => ({
             id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length,
             where: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': ' + n.failureSummary)}))"""
    )


def load(page, base: str) -> None:
    page.goto(base + "/")
    wait_in_page(page, "window.tilesPlay && window.tilesPlay.ready")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(SIZES))
def test_axe_finds_nothing_serious_in_any_state(g61, browser, axe, tmp_path, size, scheme):
    d, manifest = g61
    w, h = SIZES[size]
    minor: Counter = Counter()
    # the service's CSP forbids inline scripts: the test's own page context lets axe's in
    ctx = browser.new_context(viewport={"width": w, "height": h}, color_scheme=scheme, bypass_csp=True)
    with serving(d / "lib.sqlite", tmp_path / "runs.sqlite", [manifest]) as base:
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        found = {}

        def check(state: str) -> None:
            wait_in_page(page, "window.tilesPlay.analysed > 0")
            vs = violations(page, axe)
            serious = [v for v in vs if v["impact"] in ("serious", "critical")]
            found[state] = serious
            minor.update({f"{v['id']} ({v['impact']})": v["nodes"] for v in vs if v not in serious})

        load(page, base)
        # the check can fail: a control with no name on this page is found, then taken away
        page.evaluate("document.body.insertAdjacentHTML('beforeend', '<button id=\"noname\"></button>')")
        assert "button-name" in {v["id"] for v in violations(page, axe) if v["impact"] == "critical"}
        page.evaluate("document.getElementById('noname').remove()")
        check("no run")
        page.click("#newrun")
        wait_in_page(page, "tilesPlay.state.run !== null && tilesPlay.state.frontier.size === 1")
        seed = page.evaluate("tilesPlay.state.board.seed_tile")
        page.click("#zseed")
        wait_in_page(page, f"tilesPlay.state.puzzle && tilesPlay.state.puzzle.tile === {seed}")
        page.locator("#grid .c[aria-label*='empty']").first.click()  # a cell entered: the states beside the givens
        check("tile open")
        run, token = page.evaluate("[tilesPlay.state.run, tilesPlay.state.token]")
        play_by_api(base, run, token, rounds=2)
        load(page, base)  # the run comes back from the page's storage
        wait_in_page(page, f"tilesPlay.state.solved.size > 1 && tilesPlay.state.run === {run!r}")
        page.locator("#chartdata summary").click()  # the charts' tables open
        check("mid-run")
        play_by_api(base, run, token)
        load(page, base)
        wait_in_page(page, f"tilesPlay.state.solved.size === {len(page.evaluate('tilesPlay.state.board.tiles'))}")
        check("cleared")
        if scheme == "dark" and size == "laptop" and os.environ.get("TILES_DOCS_PNG") == "1":
            page.locator("#zseed").click()
            wait_in_page(page, f"tilesPlay.state.puzzle && tilesPlay.state.puzzle.tile === {seed}")
            page.screenshot(path=str(DOCS / "play-dark.png"))
        ctx.close()
    print(f"\naxe-core {size} {scheme}: minor and moderate: {sum(minor.values())} node(s) {dict(minor) or ''}")
    assert not errors, errors
    assert all(not v for v in found.values()), {k: v for k, v in found.items() if v}


def keyboard_to(page, element_id: str, limit: int = 40) -> None:
    """Press Tab until the element with ``element_id`` has the focus."""
    for _ in range(limit):
        if page.evaluate("document.activeElement && document.activeElement.id") == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached #{element_id}")


def solve_by_keys(page, base: str, tile: int) -> int:
    """With the board focused and ``tile`` selected: Enter opens it, the digits and arrows fill it cell by
    cell from the first empty one, Enter submits; back on the board when it is accepted."""
    page.keyboard.press("Enter")
    wait_in_page(page, f"tilesPlay.state.puzzle && tilesPlay.state.puzzle.tile === {tile}")
    wait_in_page(page, "document.activeElement && document.activeElement.getAttribute('role') === 'gridcell'")
    puzzle, sol = page.evaluate("tilesPlay.state.puzzle.puzzle"), solution(base, tile)
    start = int(page.evaluate("document.activeElement.dataset.i"))
    assert start == puzzle.index(".")
    for i in range(start, len(puzzle)):
        page.keyboard.press(sol[i] if puzzle[i] == "." else "ArrowRight")
    assert page.evaluate("tilesPlay.state.entry.join('')") == sol
    page.keyboard.press("Enter")
    wait_in_page(page, f"tilesPlay.state.solved.has({tile})")
    wait_in_page(page, "document.activeElement && document.activeElement.id === 'board'")
    n = len(puzzle) ** 0.5
    assert page.inner_text("#verdict").startswith(f"Correct! +{int(n * n)}")
    return int(n * n)


def test_a_keyboard_alone_clears_the_seed_tile_and_two_playable_tiles(g61, browser, tmp_path):
    d, manifest = g61
    with serving(d / "lib.sqlite", tmp_path / "runs.sqlite", [manifest]) as base:
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        load(page, base)
        keyboard_to(page, "player")
        page.keyboard.type("kay")
        keyboard_to(page, "newrun")
        page.keyboard.press("Enter")
        wait_in_page(page, "tilesPlay.state.run !== null && tilesPlay.state.frontier.size === 1")
        keyboard_to(page, "board")
        seed = page.evaluate("tilesPlay.state.board.seed_tile")
        assert page.evaluate("tilesPlay.state.sel") == seed  # the board's keys start on the seed tile
        assert page.inner_text("#boardsel").startswith(f"Tile {seed} (the seed tile)")
        total = solve_by_keys(page, base, seed)
        for _ in range(2):
            before = page.evaluate("tilesPlay.state.sel")
            for arrow in ("ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp"):
                page.keyboard.press(arrow)
                if page.evaluate("tilesPlay.state.sel") != before:
                    break
            tile = page.evaluate("tilesPlay.state.sel")
            assert tile != before and page.evaluate(f"tilesPlay.state.frontier.has({tile})")
            assert "playable. Enter opens it." in page.inner_text("#boardsel")
            total += solve_by_keys(page, base, tile)
        assert page.inner_text("#reward") == str(total) and page.inner_text("#solved") == "3"
        assert f"reward {total}" in page.inner_text("#verdict")
        run = page.evaluate("tilesPlay.state.run")
        score = httpx.get(f"{base}/api/v1/runs/{run}").json()
        assert (score["reward"], score["solved"], score["player"]) == (total, 3, "kay")
        # Escape leaves a tile for the board, the tile still selected
        page.keyboard.press("Enter")
        wait_in_page(page, "document.activeElement.getAttribute('role') === 'gridcell'")
        if os.environ.get("TILES_DOCS_PNG") == "1":
            page.keyboard.press("ArrowDown")
            page.screenshot(path=str(DOCS / "play-keyboard.png"))
        page.keyboard.press("Escape")
        assert page.evaluate("document.activeElement.id") == "board"
        assert not errors, errors


def announced(page) -> str:
    """The text of the puzzle panel's status (a live region) as the accessibility tree holds it."""
    tree = page.locator("#tilepanel").aria_snapshot()
    found = re.findall(r"^\s*- status: (.*)$", tree, re.M)
    assert len(found) == 1, tree
    value = found[0]  # a YAML scalar: plain, or quoted ("…" as JSON writes it, '…' with '' for ')
    if value.startswith('"'):
        return json.loads(value)
    return value[1:-1].replace("''", "'") if value.startswith("'") else value


def test_the_accessibility_tree_names_every_cell_and_announces_the_verdict(g61, browser, tmp_path):
    d, manifest = g61
    with serving(d / "lib.sqlite", tmp_path / "runs.sqlite", [manifest]) as base:
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        load(page, base)
        page.click("#newrun")
        wait_in_page(page, "tilesPlay.state.run !== null && tilesPlay.state.frontier.size === 1")
        seed = page.evaluate("tilesPlay.state.board.seed_tile")
        page.click("#zseed")
        wait_in_page(page, f"tilesPlay.state.puzzle && tilesPlay.state.puzzle.tile === {seed}")
        puzzle, known = page.evaluate("[tilesPlay.state.puzzle.puzzle, tilesPlay.state.puzzle.known]")
        n = int(len(puzzle) ** 0.5)
        tree = page.locator("#grid").aria_snapshot()
        title = page.inner_text("#tiletitle")
        # the snapshot is YAML: a line whose name holds a colon or a '#' is quoted whole
        assert f'grid "{title}"' in tree.splitlines()[0]
        names = re.findall(r'gridcell "([^"]+)"', tree)
        assert len(names) == n * n and len(re.findall(r"^  - '?row \"", tree, re.M)) == n
        for i, name in enumerate(names):
            r, c = divmod(i, n)
            value = "empty" if puzzle[i] == "." else puzzle[i]
            kind = ", given" if puzzle[i] != "." else ", known from a solved neighbour" if known[i] == "1" else ""
            assert name.startswith(f"row {r + 1}, column {c + 1}: {value}{kind}"), (i, name)
        # a value typed is in the cell's name; a submission's verdict is a status, announced
        first = puzzle.index(".")
        page.locator("#grid .c").nth(first).focus()
        page.keyboard.press("1")
        r, c = divmod(first, n)
        assert f'gridcell "row {r + 1}, column {c + 1}: 1"' in page.locator("#grid").aria_snapshot()
        sol = solution(base, seed)
        k = max(i for i, ch in enumerate(puzzle) if ch == ".")
        wrong = list(sol)
        wrong[k] = "1" if sol[k] == "0" else "0"
        page.evaluate(f"tilesPlay.state.entry = {wrong!r}")
        page.locator("#grid .c").nth(k).focus()
        page.keyboard.press(wrong[k])  # the page renders the entry again
        page.keyboard.press("Enter")
        wait_in_page(page, "document.getElementById('verdict').textContent.startsWith('Not accepted')")
        assert announced(page) == page.inner_text("#verdict")
        page.locator("#grid .c").nth(k).focus()
        page.keyboard.press(sol[k])
        page.keyboard.press("Enter")
        wait_in_page(page, f"tilesPlay.state.solved.has({seed})")
        # written after the page reopens the tile (one more request): wait for it
        wait_in_page(page, f"document.getElementById('verdict').textContent.includes('tile #{seed} solved')")
        verdict = page.inner_text("#verdict")
        assert verdict.startswith(f"Correct! +{n * n}")
        assert announced(page) == verdict
        assert page.get_attribute("#verdict", "aria-live") == "polite"


@pytest.mark.parametrize("size", [(683, 384), (640, 400)])  # 1366x768 and 1280x800 at 200% zoom
def test_at_200_percent_zoom_nothing_is_cut_off(g61, browser, tmp_path, size):
    """WCAG 1.4.4/1.4.10: at 200% a laptop's window is ~680 CSS px wide; the page reflows to one column
    with no horizontal scrolling, and every control, the open puzzle and the list of keys lie within
    the width (reached by scrolling down only)."""
    d, manifest = g61
    with serving(d / "lib.sqlite", tmp_path / "runs.sqlite", [manifest]) as base:
        page = browser.new_page(viewport={"width": size[0], "height": size[1]})
        load(page, base)
        page.click("#newrun")
        wait_in_page(page, "tilesPlay.state.run !== null")
        page.click("#zseed")
        wait_in_page(page, "tilesPlay.state.puzzle !== null")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        for sel in (
            "#newrun",
            "#player",
            "#day",
            "#zin",
            "#board",
            "#grid",
            "#submit",
            "#frontier",
            ".keys",
            ".scrollx",
        ):
            box = page.locator(sel).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= size[0] + 0.5, (sel, box)
