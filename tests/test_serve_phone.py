"""The play page on a phone and on a laptop, in a real headless browser (Debian's chromium driven by
playwright; issue 56): at every width from 320 px to a laptop no piece of the page overlaps another
and the board takes most of the width; on a phone (a touch context: ``has_touch``, ``is_mobile``) a
person pans and pinches the board with their fingers and plays the seed tile by taps alone.

What "large enough to tap" means here, on a phone (style.css's layout for widths up to 700 px): every
button, the day menu and the name field are at least 40 px each way; the puzzle's cells are as large
as the panel's width allows, at most 44 px: 40 px or more up to n = 8 on a 360 px wide phone (n = 9
from 390 px), about 20 px for the largest tiles (n = 16) there, with digits at 0.6 of the cell.

``TILES_DOCS_PNG=1`` also writes the phone picture to docs/play-phone.png (the README links it).
The page runs under the service's CSP (no 'unsafe-eval'): waits go through ``wait_in_page``.
"""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import httpx
import pytest
from serve_support import daily_g61, serving, wait_in_page

DAY = "2026-11-29"
DOCS = Path(__file__).resolve().parents[1] / "docs"
PHONES = [(390, 844), (360, 740)]
WIDTHS = [(320, 640), *PHONES, (430, 932), (1280, 800), (1366, 768)]
NARROW = 700  # style.css's media query: the phone layout up to this width

# The pieces of the page that must not overlap: (name, selector, the piece it is part of). A part is
# not checked against the piece holding it, but against everything else (the submit button against
# the board, the header's controls against each other...). Hidden pieces are left out.
PIECES = [
    ("header", "header", None),
    ("zoom bar", "#zoombar", None),
    ("board", "#board", None),
    ("tile panel", "#tilepanel", None),
    ("playable", "#frontier", None),
    ("leaderboard", "#analysis .scrollx", None),
    ("reward chart", "#chartreward", None),
    ("mean-n chart", "#chartmeann", None),
    ("title", "header h1", "header"),
    ("day", "header label", "header"),
    ("run", "#runinfo", "header"),
    ("name", "#player", "header"),
    ("new run", "#newrun", "header"),
    ("score", "header .score", "header"),
    ("api", "header a", "header"),
    *[(f"zoom {b}", f"#{b}", "zoom bar") for b in ("zin", "zout", "zfit", "zseed")],
    ("tile title", "#tiletitle", "tile panel"),
    ("tile hint", "#tilehint", "tile panel"),
    ("puzzle", "#grid", "tile panel"),
    ("submit", "#submit", "tile panel"),
    ("clear", "#clear", "tile panel"),
    ("to board", "#toboard", "tile panel"),
    ("filled", "#filled", "tile panel"),
]
TAPPED = ["#zin", "#zout", "#zfit", "#zseed", "#newrun", "#day", "#player", "#submit", "#clear", "#toboard"]


@pytest.fixture(scope="module")
def g61(tmp_path_factory):
    return daily_g61(tmp_path_factory, "g61phone", DAY, bytes.fromhex("cd" * 32))


@pytest.fixture(scope="module")
def base(g61, tmp_path_factory):
    d, manifest = g61
    with serving(d / "lib.sqlite", tmp_path_factory.mktemp("phone") / "runs.sqlite", [manifest]) as url:
        yield url


def open_page(browser, base, w, h, scale=1):
    """A page at w×h CSS px, a phone's touch context below ``NARROW``; (context, page, script errors)."""
    phone = w <= NARROW
    ctx = browser.new_context(
        viewport={"width": w, "height": h}, device_scale_factor=scale, has_touch=phone, is_mobile=phone
    )
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + "/")
    wait_in_page(page, "window.tilesPlay && window.tilesPlay.ready && tilesPlay.analysed > 0")
    return ctx, page, errors


def boxes(page) -> dict:
    """Each visible piece's box in page coordinates (left, top, right, bottom), by name."""
    return page.evaluate(
        """(pieces) => {
        const out = {};
        for (const [name, sel] of pieces) {
          const el = document.querySelector(sel);
          if (!el || !el.getClientRects().length || getComputedStyle(el).visibility === "hidden") continue;
          const r = el.getBoundingClientRect();
          if (r.width < 1 || r.height < 1) continue;
          out[name] = [r.left + scrollX, r.top + scrollY, r.right + scrollX, r.bottom + scrollY];
        }
        return out; }""",
        [[name, sel] for name, sel, _ in PIECES],
    )


def assert_laid_out(page, w):
    """No two visible pieces overlap (but a part and the piece holding it), each is inside the page's
    width, and the page itself is no wider than the screen."""
    got, inside = boxes(page), {name: holder for name, _, holder in PIECES}
    for name in ("header", "zoom bar", "board", "tile panel", "leaderboard", "reward chart", "mean-n chart"):
        assert name in got, (name, "not visible")
    names = sorted(got)
    for i, a in enumerate(names):
        la, ta, ra, ba = got[a]
        assert la >= -0.5 and ra <= w + 0.5, (a, got[a], w)
        for b in names[i + 1 :]:
            if inside.get(a) == b or inside.get(b) == a:
                continue
            lb, tb, rb, bb = got[b]
            across, down = min(ra, rb) - max(la, lb), min(ba, bb) - max(ta, tb)
            assert across <= 0.5 or down <= 0.5, f"{a} {got[a]} overlaps {b} {got[b]} at {w} px"
    assert page.evaluate("document.documentElement.scrollWidth") <= w
    return got


def tap(page, selector, scroll=True):
    """A finger's tap on the middle of ``selector`` (scrolled into view first, as a thumb would)."""
    el = page.locator(selector)
    if scroll:
        el.scroll_into_view_if_needed()
    b = el.bounding_box()
    page.touchscreen.tap(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)


def settle(page):
    """Wait for a (smooth) scroll of the page to end."""
    last = None
    for _ in range(100):
        now = page.evaluate("scrollY")
        if now == last:
            return
        last = now
        time.sleep(0.1)


def tile_centre(page, tile):
    t = page.evaluate(f"tilesPlay.state.board.tiles[{tile}]")
    return page.evaluate(f"tilesPlay.cellToClient({t['y0'] + t['n'] / 2 - 0.5}, {t['x0'] + t['n'] / 2 - 0.5})")


def open_by_hand(page, tile, phone):
    """Open ``tile`` as a person does: a tap (a click on a laptop) on its middle on the board."""
    pt = tile_centre(page, tile)
    (page.touchscreen.tap if phone else page.mouse.click)(pt["x"], pt["y"])
    wait_in_page(page, f"tilesPlay.state.puzzle && tilesPlay.state.puzzle.tile === {tile}")
    settle(page)


def assert_cells_fit(page, w):
    """The open puzzle's cells: min(44, what the panel's width gives each) px, 40 px or more wherever
    n allows it, their digits at 0.6 of a cell (at most 22 px)."""
    n = page.evaluate("tilesPlay.state.puzzle.n")
    room = page.evaluate("document.getElementById('tilepanel').clientWidth")
    want = max(16, min(44, (room - 4 - (n - 1)) // n))
    cells = page.evaluate("""[...document.querySelectorAll('#grid .c')].map(c => {
        const r = c.getBoundingClientRect(); return [r.width, r.height, parseFloat(getComputedStyle(c).fontSize)];
        })""")
    assert len(cells) == n * n
    for cw, ch, font in cells:
        assert abs(cw - want) < 0.6 and abs(ch - want) < 0.6, (n, w, cw, ch, want)
        assert font >= min(22, 0.6 * want) - 0.5 and font >= 10, (n, w, font)
    if (room - 4 + 1) // 41 >= n:
        assert want >= 40, (n, w, want)
    grid = page.locator("#grid").bounding_box()
    assert grid["width"] <= room + 0.5
    return n, want


@pytest.mark.slow
@pytest.mark.parametrize("w,h", WIDTHS, ids=[f"{w}x{h}" for w, h in WIDTHS])
def test_nothing_overlaps_and_the_board_takes_the_width(base, browser, w, h, tmp_path):
    phone = w <= NARROW
    ctx, page, errors = open_page(browser, base, w, h)
    try:
        assert_laid_out(page, w)
        # the board: most of the screen's width in view, and the whole board drawn across it after `fit`
        b = page.evaluate("document.getElementById('board').getBoundingClientRect().toJSON()")
        seen_w, seen_h = min(b["right"], w) - max(b["left"], 0), min(b["bottom"], h) - max(b["top"], 0)
        assert seen_w >= 0.6 * w and seen_h >= 0.6 * min(w, h), (b, w, h)
        g = page.evaluate("tilesPlay.state.G")
        a, z = page.evaluate(f"[tilesPlay.cellToClient(0, 0), tilesPlay.cellToClient({g - 1}, {g - 1})]")
        assert a["x"] >= b["left"] and z["x"] <= b["right"] and a["y"] >= b["top"] and z["y"] <= b["bottom"]
        assert z["x"] - a["x"] >= 0.9 * min(b["width"], b["height"]) and (not phone or z["x"] - a["x"] >= 0.6 * w)
        # a tile opened without a run (its puzzle shows, Submit stays off): the panel beside or below
        seed = page.evaluate("tilesPlay.state.board.seed_tile")
        open_by_hand(page, seed, phone)
        got = assert_laid_out(page, w)
        assert "puzzle" in got and "submit" in got and page.is_disabled("#submit")
        if phone:
            assert page.evaluate("document.getElementById('tilepanel').getBoundingClientRect().top") < 2  # in view
            assert "to board" in got
            # no double-tap zoom on a control, and the board's own pan and pinch (no browser gesture)
            assert page.evaluate("getComputedStyle(document.getElementById('board')).touchAction") == "none"
            for sel in ("#submit", "#zin", "#newrun", "#grid .c", "#day"):
                assert page.evaluate(f"getComputedStyle(document.querySelector('{sel}')).touchAction") == "manipulation"
            for sel in TAPPED:
                r = page.locator(sel).bounding_box()
                assert r["width"] >= 40 and r["height"] >= 40, (sel, r)
            assert_cells_fit(page, w)
            # the smallest tile: cells of 40 px or more
            tap(page, "#toboard", scroll=False)
            wait_in_page(page, "scrollY === 0")
            small = page.evaluate("tilesPlay.state.board.tiles.reduce((a, t) => t.n < a.n ? t : a).id")
            open_by_hand(page, small, phone)
            n, cell = assert_cells_fit(page, w)
            assert n <= 8 and cell >= 40, (n, cell)
            assert_laid_out(page, w)
            # the charts as wide as the column, drawn at that width
            for sel in ("#chartreward", "#chartmeann"):
                cw, px = page.evaluate(
                    f"[document.querySelector('{sel}').clientWidth, document.querySelector('{sel}').width]"
                )
                assert cw >= w - 20 and px == round(cw * page.evaluate("devicePixelRatio"))
        else:
            assert "to board" not in got  # the laptop needs no way back up
            assert got["tile panel"][0] >= got["board"][2] - 0.5  # the panel beside the board
        page.screenshot(path=str(tmp_path / f"layout-{w}x{h}.png"), full_page=phone)
        if os.environ.get("TILES_DOCS_PNG") and (w, h) == (1366, 768):  # the laptop picture beside the phone's
            (DOCS / "play-laptop.png").write_bytes((tmp_path / f"layout-{w}x{h}.png").read_bytes())
        assert errors == []
    finally:
        ctx.close()


def touches(cdp, kind, points):
    cdp.send(
        "Input.dispatchTouchEvent",
        {
            "type": kind,
            "touchPoints": [
                {"x": x, "y": y, "id": k, "radiusX": 4, "radiusY": 4, "force": 1} for k, (x, y) in enumerate(points)
            ],
        },
    )


def fingers(cdp, start, end, steps=10):
    """Fingers down at ``start`` points, moved in ``steps`` to ``end``, lifted."""
    touches(cdp, "touchStart", start)
    for i in range(1, steps + 1):
        touches(
            cdp,
            "touchMove",
            [
                (a[0] + (b[0] - a[0]) * i / steps, a[1] + (b[1] - a[1]) * i / steps)
                for a, b in zip(start, end, strict=True)
            ],
        )
    touches(cdp, "touchEnd", [])


def board_point(page, x, y):
    """The board cell coordinates (fractional) under client point (x, y)."""
    return page.evaluate(f"""(() => {{ const b = document.getElementById('board').getBoundingClientRect(),
        v = tilesPlay.state.view; return [({x} - b.left - v.ox) / v.s, ({y} - b.top - v.oy) / v.s]; }})()""")


def fill_by_taps(page, tile, cells):
    """Tap each empty cell of the open puzzle once for a 0, twice for a 1, as ``cells`` says (a '.'
    left alone)."""
    puzzle = page.evaluate("tilesPlay.state.puzzle.puzzle")
    for i, (given, want) in enumerate(zip(puzzle, cells, strict=True)):
        if given != "." or want == ".":
            continue
        sel = f"#grid .c >> nth={i}"
        for k in range(1 if want == "0" else 2):
            tap(page, sel, scroll=k == 0)
        assert page.evaluate(f"tilesPlay.state.entry[{i}]") == want, (tile, i)


def composite(browser, shots, out: Path):
    """The phone pictures side by side, put together by the browser itself (no image library)."""
    imgs = "".join(f'<img src="data:image/png;base64,{base64.b64encode(s).decode()}">' for s in shots)
    page = browser.new_page(viewport={"width": 1800, "height": 1800})
    page.set_content(
        '<html><body style="margin:0;background:#fff"><div id="c" style="display:inline-flex;'
        f'gap:24px;padding:16px;background:#fff">{imgs}</div></body></html>'
    )
    page.locator("#c").screenshot(path=str(out))
    page.close()


@pytest.mark.slow
@pytest.mark.parametrize("w,h", PHONES, ids=[f"{w}x{h}" for w, h in PHONES])
def test_a_person_plays_the_seed_tile_with_their_fingers(base, browser, w, h, tmp_path):
    ctx, page, errors = open_page(browser, base, w, h, scale=2)
    try:
        assert page.evaluate("navigator.maxTouchPoints") > 0 and page.evaluate("'ontouchstart' in window")
        tap(page, "#player")
        page.keyboard.type("thumbs")
        tap(page, "#newrun")
        wait_in_page(page, "tilesPlay.state.run !== null && tilesPlay.state.frontier.size === 1")
        cdp = ctx.new_cdp_session(page)
        b = page.locator("#board").bounding_box()
        cx, cy = b["x"] + b["width"] / 2, b["y"] + b["height"] / 2
        # one finger drags the board (and neither scrolls the page nor opens a tile)
        v0 = page.evaluate("({...tilesPlay.state.view})")
        fingers(cdp, [(cx, cy)], [(cx + 60, cy + 40)])
        v1 = page.evaluate("({...tilesPlay.state.view})")
        assert abs(v1["ox"] - v0["ox"] - 60) < 1 and abs(v1["oy"] - v0["oy"] - 40) < 1 and v1["s"] == v0["s"]
        assert page.evaluate("scrollY") == 0 and page.evaluate("tilesPlay.state.sel") is None
        # two fingers spread from 60 px apart to 180 px: three times the zoom, about their middle
        under = board_point(page, cx, cy)
        fingers(cdp, [(cx - 30, cy), (cx + 30, cy)], [(cx - 90, cy), (cx + 90, cy)])
        v2 = page.evaluate("({...tilesPlay.state.view})")
        assert abs(v2["s"] / v1["s"] - 3) < 0.05, (v1, v2)
        after = board_point(page, cx, cy)
        assert abs(after[0] - under[0]) < 0.3 and abs(after[1] - under[1]) < 0.3, (under, after)
        assert page.evaluate("visualViewport.scale") == 1 and page.evaluate("scrollY") == 0  # the page unzoomed
        fingers(cdp, [(cx - 90, cy), (cx + 90, cy)], [(cx - 45, cy), (cx + 45, cy)])  # and back: half
        assert abs(page.evaluate("tilesPlay.state.view.s") / v2["s"] - 0.5) < 0.05
        tap(page, "#zfit", scroll=False)
        assert page.evaluate("tilesPlay.state.view.s") < v1["s"] * 1.01
        # the seed tile, opened and solved by taps alone
        seed = page.evaluate("tilesPlay.state.board.seed_tile")
        open_by_hand(page, seed, True)
        assert page.inner_text("#tiletitle").startswith(f"Tile #{seed}") and "playable" in page.inner_text("#tiletitle")
        sol = httpx.get(f"{base}/api/v1/days/{DAY}/tiles/{seed}/solution").json()["cells"]
        fill_by_taps(page, seed, sol)
        assert page.evaluate("tilesPlay.state.entry.join('')") == sol and page.is_enabled("#submit")
        tap(page, "#submit")
        wait_in_page(page, f"tilesPlay.state.solved.has({seed})")
        n = page.evaluate(f"tilesPlay.state.board.tiles[{seed}].n")
        assert page.inner_text("#verdict").startswith(f"Correct! +{n * n}")
        assert page.inner_text("#reward") == str(n * n) and page.inner_text("#solved") == "1"
        run = page.evaluate("tilesPlay.state.run")
        score = httpx.get(f"{base}/api/v1/runs/{run}").json()
        assert (score["reward"], score["solved"], score["player"]) == (n * n, 1, "thumbs")
        # a neighbour from the "playable" chips, half filled: the pictures
        nbr = page.evaluate(
            "[...tilesPlay.state.frontier].sort((a, b) => tilesPlay.state.board.tiles[a].n "
            "- tilesPlay.state.board.tiles[b].n || a - b)[0]"
        )
        tap(page, f"#frontier button:text-is('#{nbr} · n{page.evaluate(f'tilesPlay.state.board.tiles[{nbr}].n')}')")
        wait_in_page(page, f"tilesPlay.state.puzzle && tilesPlay.state.puzzle.tile === {nbr}")
        settle(page)
        nsol = httpx.get(f"{base}/api/v1/days/{DAY}/tiles/{nbr}/solution").json()["cells"]
        empty = [i for i, ch in enumerate(page.evaluate("tilesPlay.state.puzzle.puzzle")) if ch == "."]
        half = set(empty[: len(empty) // 2])
        fill_by_taps(page, nbr, "".join(ch if i in half else "." for i, ch in enumerate(nsol)))
        assert_laid_out(page, w)
        page.evaluate("document.getElementById('tilepanel').scrollIntoView()")
        settle(page)
        panel = page.screenshot()
        tap(page, "#toboard", scroll=False)
        wait_in_page(page, "scrollY === 0")
        board = page.screenshot()
        (tmp_path / "panel.png").write_bytes(panel)
        (tmp_path / "board.png").write_bytes(board)
        composite(browser, [board, panel], tmp_path / "play-phone.png")
        if os.environ.get("TILES_DOCS_PNG") and (w, h) == PHONES[0]:
            (DOCS / "play-phone.png").write_bytes((tmp_path / "play-phone.png").read_bytes())
        assert errors == []
    finally:
        ctx.close()
