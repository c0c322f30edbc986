"""``/docs`` of a real `tiles referee serve`: one server-rendered page made from the served
``/openapi.json`` (``referee.service.apidocs``), that says everything the document says about each
operation and needs nothing outside the service (no script, no inline style, no other origin).
Whether it renders in a browser under the CSP is ``tests/test_serve_docs_browser.py``."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx
import pytest
from serve_support import board21_day, serving


class Sections(HTMLParser):
    """The text inside each element that has an id (nested ones count for their parents too), the
    attributes of every tag, and the page's whole text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, str | None]] = []
        self.text: dict[str, str] = {}
        self.tags: list[tuple[str, dict]] = []
        self.all = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag not in ("meta", "link", "br", "img", "input"):
            self.open.append((tag, a.get("id")))
            if a.get("id"):
                self.text.setdefault(a["id"], "")

    def handle_endtag(self, tag):
        while self.open:
            t, _ = self.open.pop()
            if t == tag:
                break

    def handle_data(self, data):
        self.all += data
        for _, ident in self.open:
            if ident:
                self.text[ident] += data


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """(the /docs answer, its parse, the served OpenAPI document)."""
    fx, d, manifest, _ = board21_day(tmp_path_factory, "docs")
    with serving(fx.lib_path, d / "runs.sqlite", [manifest], log=d / "serve.log") as base:
        r = httpx.get(base + "/docs", timeout=30)
        doc = httpx.get(base + "/openapi.json", timeout=30).json()
        redoc = httpx.get(base + "/redoc", timeout=30)
        oauth = httpx.get(base + "/docs/oauth2-redirect", timeout=30)
    assert redoc.status_code == 404 and oauth.status_code == 404  # Swagger UI's and ReDoc's pages are off
    p = Sections()
    p.feed(r.text)
    return r, p, doc


def ops(doc):
    return [(m, path, op) for path, o in doc["paths"].items() for m, op in o.items()]


def squash(text: str) -> str:
    return " ".join(text.split())


def test_the_page_needs_nothing_outside_the_service(page):
    r, p, _ = page
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert not any(tag == "script" for tag, _ in p.tags), "no script at all"
    assert not any("style" in a or any(k.startswith("on") for k in a) for _, a in p.tags), "no inline style/handler"
    assert "<style" not in r.text.lower()
    urls = [a[k] for _, a in p.tags for k in ("href", "src") if k in a]
    assert urls and all(u.startswith(("/", "#")) or u == "data:," for u in urls), urls
    assert ("link", {"rel": "stylesheet", "href": "/static/docs.css"}) in p.tags
    assert any(tag == "a" and a.get("href") == "/openapi.json" for tag, a in p.tags)


def test_every_operation_is_on_the_page_with_all_the_document_says(page):
    _, p, doc = page
    assert len(ops(doc)) >= 15
    for method, path, op in ops(doc):
        sec = squash(p.text[f"op-{op['operationId']}"])
        assert sec.startswith(f"{method.upper()} {path}"), sec[:80]
        assert squash(op["summary"]) in sec
        for prm in op.get("parameters", []):
            assert prm["name"] in sec and squash(prm["description"]) in sec, (path, prm["name"])
            for limit in ("maxLength", "maximum", "pattern"):
                if limit in prm["schema"]:
                    assert str(prm["schema"][limit]).removesuffix(".0") in sec, (path, prm["name"], limit)
        if "requestBody" in op:
            for media, c in op["requestBody"]["content"].items():
                assert f"{media}: {c['schema']['$ref'].rsplit('/', 1)[1]}" in sec
        for status, resp in op["responses"].items():
            row = squash(p.text[f"op-{op['operationId']}-{status}"])
            assert row.startswith(status) and squash(resp["description"]) in row, (path, status, row)
            for c in resp.get("content", {}).values():
                assert c["schema"]["$ref"].rsplit("/", 1)[1] in row
        if op.get("security"):
            assert "runToken" in sec and "Authorization: Bearer TOKEN" in sec


def test_the_moves_write_shows_its_401_and_403(page):
    """The error answers that exist are on the page with their meaning (RFC 6750: 401 without a
    usable token, with its challenge; 403 for a wrong one)."""
    _, p, doc = page
    moves = doc["paths"]["/api/v1/runs/{run}/moves"]["post"]
    for status in ("400", "401", "403", "404", "409", "413", "415"):
        assert status in moves["responses"]
        assert squash(moves["responses"][status]["description"]) in squash(p.text[f"op-moves-{status}"])
    assert "WWW-Authenticate" in p.text["op-moves-401"]


def test_every_schema_has_its_section_and_every_link_lands(page):
    _, p, doc = page
    for name, s in doc["components"]["schemas"].items():
        sec = squash(p.text[f"schema-{name}"])
        assert sec.startswith(name)
        for prop, v in s.get("properties", {}).items():
            assert prop in sec and squash(v.get("description", "")) in sec, (name, prop)
    anchors = [a["href"][1:] for tag, a in p.tags if tag == "a" and a.get("href", "").startswith("#")]
    assert anchors and all(x in p.text for x in anchors), [x for x in anchors if x not in p.text]


def test_the_documents_text_is_escaped():
    """A description with markup shows as text, never as markup."""
    from referee.service.apidocs import render

    doc = {
        "openapi": "3.1.0",
        "info": {"title": "<b>t</b>", "version": "1"},
        "paths": {
            "/x/{a}": {
                "get": {
                    "operationId": "x",
                    "summary": "<script>alert(1)</script>",
                    "parameters": [
                        {
                            "name": 'a"><img src=x>',
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string", "pattern": "^<&>$"},
                            "description": "<i>",
                        }
                    ],
                    "responses": {"200": {"description": "<hr>"}},
                }
            }
        },
    }
    html = render(doc)
    assert not re.search(r"<(script|b|i|hr|img)[ >]", html), html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "^&lt;&amp;&gt;$" in html
