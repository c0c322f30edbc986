"""The play page and ``/docs`` in a real headless browser (Debian's chromium driven by playwright) with
every request outside the service blocked, as on a machine without internet: both render, neither
asks for anything elsewhere, and the service's Content-Security-Policy reports no violation.

`scripts/test.sh` installs chromium with apt when it is missing; without it this test is skipped
locally and fails under CI (CI=true), as ``tests/test_serve_browser.py`` does.
"""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Error as PlaywrightError
from serve_support import board21_day, serving, wait_in_page

DAY = "2026-11-29"
# every violation the page's CSP reports, kept on window before any of the page's own scripts run
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
  e => window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    fx, d, manifest, _ = board21_day(tmp_path_factory, "offline")
    with serving(fx.lib_path, d / "runs.sqlite", [manifest], log=d / "serve.log") as url:
        yield url


class Offline:
    """A page whose requests outside ``base`` are aborted and recorded, with its CSP violations,
    console lines about the policy, and script errors recorded too."""

    def __init__(self, browser, base: str) -> None:
        self.base, self.blocked, self.console, self.errors = base, [], [], []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.add_init_script(RECORD_VIOLATIONS)
        self.page.route("**/*", self._route)
        self.page.on(
            "console",
            lambda m: (
                self.console.append(m.text)
                if "Content Security Policy" in m.text or "Content-Security-Policy" in m.text
                else None
            ),
        )
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route) -> None:
        url = route.request.url
        if url == self.base or url.startswith(self.base + "/"):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def violations(self) -> list[str]:
        return self.page.evaluate("window.__violations")

    def assert_clean(self) -> None:
        """Nothing asked for elsewhere, no CSP violation reported either way, no script error."""
        assert self.blocked == [], self.blocked
        assert self.violations() == [] and self.console == [], (self.violations(), self.console)
        assert self.errors == [], self.errors


@pytest.mark.slow
def test_the_play_page_plays_offline_under_its_policy(base, browser, tmp_path):
    o = Offline(browser, base)
    page = o.page
    page.goto(base + "/")
    wait_in_page(page, "window.tilesPlay && window.tilesPlay.ready")
    assert page.inner_text("header h1") == "tiles" and "G=21" in page.inner_text("#day")
    drawn = page.evaluate("""() => { const c = document.getElementById("board");
        const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        let k = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) k++; return k; }""")
    assert drawn > 10000, drawn  # the board is drawn, not only there
    assert page.evaluate("getComputedStyle(document.querySelector('header')).display") == "flex"  # styled
    page.fill("#player", "offline")
    page.click("#newrun")  # the API answers the page's fetch
    wait_in_page(page, "tilesPlay.state.run !== null && tilesPlay.state.frontier.size === 1")
    page.screenshot(path=str(tmp_path / "page.png"))
    o.assert_clean()


@pytest.mark.slow
def test_docs_render_offline_and_list_every_operation(base, browser, tmp_path):
    doc = httpx.get(base + "/openapi.json", timeout=30).json()
    ops = [(m.upper(), p) for p, o in doc["paths"].items() for m in o]
    o = Offline(browser, base)
    page = o.page
    page.goto(base + "/docs")
    page.wait_for_load_state("load")
    assert page.inner_text("h1").startswith("tiles referee")
    listed = [" ".join(li.split()[:2]) for li in page.locator("nav li").all_inner_texts()]
    assert listed == [f"{m} {p}" for m, p in ops], listed
    assert page.locator("section.op").count() == len(ops)
    assert page.is_visible("#op-moves") and "401" in page.inner_text("#op-moves")
    # the stylesheet applied (a blocked one would leave sections unstyled)
    assert (
        page.evaluate("getComputedStyle(document.querySelector('section.op')).backgroundColor") == "rgb(255, 255, 255)"
    )
    page.click("nav a[href='#op-moves']")
    assert page.evaluate("location.hash") == "#op-moves"
    page.screenshot(path=str(tmp_path / "docs.png"), full_page=False)
    o.assert_clean()


@pytest.mark.slow
def test_the_policy_and_the_blocking_are_really_watched(base, browser):
    """The recorders can fail: an inline script and a request to another origin, both made by the
    test, are reported (so the empty lists above mean something)."""
    o = Offline(browser, base)
    page = o.page
    page.goto(base + "/docs")
    page.evaluate("""() => { const s = document.createElement("script");
        s.textContent = "window.__ran = 1"; document.body.appendChild(s); }""")
    wait_in_page(page, "window.__violations.length > 0")
    assert page.evaluate("window.__ran") is None  # the inline script did not run
    assert any(v.startswith("script-src") for v in o.violations()), o.violations()
    page.evaluate("""() => { const i = document.createElement("img");
        i.src = "https://example.invalid/pixel.png"; document.body.appendChild(i); }""")
    wait_in_page(page, "window.__violations.some(v => v.startsWith('img-src'))")
    with pytest.raises(PlaywrightError):
        page.goto("https://example.invalid/")  # a navigation elsewhere is aborted
    assert "https://example.invalid/" in o.blocked
