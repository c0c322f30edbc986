"""The OpenAPI document of `tiles referee serve` as a contract: read from a real served app
(``/openapi.json``), every body and answer is a named schema, every error the one ``Error`` model, the
bearer scheme declared and used by the moves write, no 422, every field described. Then the document
alone is enough to call every operation: a request built from it (path parameters from the fixture,
a body generated from the request schema) gets a 2xx whose body validates against the response schema.
"""

from __future__ import annotations

import re
from dataclasses import replace

import httpx
import pytest
from needs import need_module
from referee_support import board21
from serve_support import serving

DAY, FUTURE = "2026-11-29", "2099-01-01"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(client at the site root, the OpenAPI document) of a service offering DAY (over) and FUTURE."""
    fx = board21(tmp_path_factory)
    d = tmp_path_factory.mktemp("openapi")
    (d / "past.json").write_text(fx.manifest.to_json())
    (d / "future.json").write_text(replace(fx.manifest, day=FUTURE).to_json())
    with serving(fx.lib_path, d / "runs.sqlite", [d / "past.json", d / "future.json"]) as base:
        with httpx.Client(base_url=base, timeout=30) as client:
            r = client.get("/openapi.json")
            assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
            yield client, r.json()


def operations(doc):
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                yield path, method, op


def schemas(doc):
    return doc["components"]["schemas"]


def ref_name(schema) -> str | None:
    ref = schema.get("$ref", "") if isinstance(schema, dict) else ""
    return ref.removeprefix("#/components/schemas/") if ref.startswith("#/components/schemas/") else None


def test_every_body_and_answer_is_a_named_schema(served):
    _, doc = served
    seen = 0
    for path, method, op in operations(doc):
        where = f"{method.upper()} {path}"
        if "requestBody" in op:
            content = op["requestBody"]["content"]
            assert list(content) == ["application/json"], where
            name = ref_name(content["application/json"]["schema"])
            assert name in schemas(doc), f"{where}: request body is not a $ref to a named schema"
        for status, resp in op["responses"].items():
            for media, body in resp.get("content", {}).items():
                assert media == "application/json", (where, status)
                name = ref_name(body.get("schema"))
                assert name in schemas(doc), f"{where} {status}: answer is not a $ref to a named schema"
                if int(status) >= 400:
                    assert name == "Error", f"{where} {status}: an error answer that is not the Error model"
                seen += 1
        assert any(s.startswith("2") for s in op["responses"]), where
    assert seen > 40
    assert schemas(doc)["Error"]["required"] == ["error"]
    assert schemas(doc)["Days"]["type"] == "array"  # a RootModel is a named schema too


def test_operation_ids_are_the_handlers_names(served):
    """A generated client names its functions after operationId: short, unique, Python identifiers."""
    _, doc = served
    ids = [op["operationId"] for _path, _method, op in operations(doc)]
    assert len(ids) == len(set(ids)) == 15 and all(i.isidentifier() and "api_v1" not in i for i in ids)
    assert {"days", "board", "cells", "create_run", "moves", "run_tile", "history", "leaderboard"} <= set(ids)


def test_no_operation_declares_422(served):
    _, doc = served
    for path, method, op in operations(doc):
        assert "422" not in op["responses"], f"{method.upper()} {path}"
        assert "400" in op["responses"], f"{method.upper()} {path}: malformed input is a 400 here"
    assert "HTTPValidationError" not in schemas(doc) and "ValidationError" not in schemas(doc)


def test_the_bearer_scheme_is_declared_and_guards_the_moves_write(served):
    _, doc = served
    schemes = doc["components"]["securitySchemes"]
    ((name, scheme),) = schemes.items()
    assert scheme["type"] == "http" and scheme["scheme"].lower() == "bearer" and scheme.get("description")
    moves = doc["paths"]["/api/v1/runs/{run}/moves"]["post"]
    assert {name: []} in moves["security"]
    assert "403" in moves["responses"] and "409" in moves["responses"]
    # RFC 6750: 401 without a usable token (its challenge always sent), 403 for a wrong one
    unauth, forbidden = moves["responses"]["401"], moves["responses"]["403"]
    assert "malformed" in unauth["description"] and "wrong token" in forbidden["description"].lower()
    assert unauth["headers"]["WWW-Authenticate"]["required"] is True
    assert forbidden["headers"]["WWW-Authenticate"]["required"] is False
    for path, method, op in operations(doc):
        if (path, method) != ("/api/v1/runs/{run}/moves", "post"):
            assert "security" not in op, f"{method.upper()} {path}: only the moves write needs a token"


def _named(schema) -> bool:
    """A $ref, or a type built of them (an array of a named schema, a named schema or null)."""
    if ref_name(schema):
        return True
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return _named(schema["items"])
    alts = schema.get("anyOf") or schema.get("oneOf") or schema.get("allOf") or []
    return bool(alts) and all(_named(a) or a.get("type") == "null" for a in alts) and any(map(_named, alts))


def test_every_field_is_described(served):
    _, doc = served
    missing = [
        f"{name}.{prop}"
        for name, s in schemas(doc).items()
        for prop, p in s.get("properties", {}).items()
        if not p.get("description") and not _named(p)
    ]
    assert missing == []
    for name in ("TileView", "Cells", "Zone", "RunBatch"):
        props = schemas(doc)[name]["properties"]
        assert props and all(p.get("description") for p in props.values()), name


# ------------------------------------------------------------------ every operation, from the document alone


def resolve(doc, schema):
    while (name := ref_name(schema)) is not None:
        schema = schemas(doc)[name]
    return schema


_CANDIDATES = ["", "0", "1", "a", "x", DAY, "0" * 64]


def _string(schema) -> str:
    lo, hi = schema.get("minLength", 0), schema.get("maxLength", 1 << 30)
    pattern = schema.get("pattern")
    for base in _CANDIDATES + [c * max(lo, 1) for c in "0a"]:
        if lo <= len(base) <= hi and (pattern is None or re.search(pattern, base)):
            return base
    raise AssertionError(f"no string for {schema}")


def instance(doc, schema):
    """A minimal instance of ``schema``: required properties only, arrays of max(minItems, 1) items, the
    smallest number allowed; for anyOf the first branch that is not null."""
    schema = resolve(doc, schema)
    if "anyOf" in schema or "oneOf" in schema:
        alts = schema.get("anyOf") or schema["oneOf"]
        return instance(doc, next((a for a in alts if a.get("type") != "null"), alts[0]))
    if "allOf" in schema:
        return instance(doc, schema["allOf"][0])
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: instance(doc, props.get(k, {})) for k in schema.get("required", [])}
    if kind == "array":
        n = max(schema.get("minItems", 0), 1)
        n = min(n, schema.get("maxItems", n))
        return [instance(doc, schema.get("items", {})) for _ in range(n)]
    if kind == "string":
        return _string(schema)
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        return int(lo) if kind == "integer" else float(lo)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    raise AssertionError(f"no instance for {schema}")


def validator(doc, schema):
    jsonschema = need_module("jsonschema", "jsonschema comes with the test extras")
    root = {"$schema": "https://json-schema.org/draft/2020-12/schema", "components": doc["components"], **schema}
    cls = jsonschema.validators.validator_for(root)
    return cls(root, format_checker=cls.FORMAT_CHECKER)


def test_a_request_built_from_the_document_alone_succeeds_for_every_operation(served):
    client, doc = served
    created = client.post("/api/v1/days/" + DAY + "/runs")
    assert created.status_code == 201
    run, token = created.json()["run"], created.json()["token"]
    real = {"day": DAY, "run": run, "tile": 0}
    scheme = next(iter(doc["components"]["securitySchemes"]))
    called = []
    for path, method, op in operations(doc):
        where = f"{method.upper()} {path}"
        url, query, headers = path, {}, {}
        for p in op.get("parameters", []):
            if p["in"] == "path":
                url = url.replace("{" + p["name"] + "}", str(real[p["name"]]))
            elif p["in"] == "query":
                query[p["name"]] = instance(doc, p["schema"])
            elif p.get("required"):
                headers[p["name"]] = str(instance(doc, p["schema"]))
        assert "{" not in url, where
        if any(scheme in s for s in op.get("security", [])):
            headers["Authorization"] = f"Bearer {token}"
        kwargs = {}
        if "requestBody" in op:
            kwargs["json"] = instance(doc, op["requestBody"]["content"]["application/json"]["schema"])
        r = client.request(method, url, params=query, headers=headers, **kwargs)
        assert 200 <= r.status_code < 300, (where, kwargs, r.status_code, r.text)
        declared = op["responses"][str(r.status_code)]["content"]["application/json"]["schema"]
        assert r.headers["content-type"].startswith("application/json"), where
        errors = sorted(validator(doc, declared).iter_errors(r.json()), key=str)
        assert not errors, (where, [e.message for e in errors[:3]])
        called.append(where)
    assert len(called) == len(list(operations(doc))) >= 15
    # the generated moves request was judged (a verdict, not a refusal), and recorded
    assert client.get(f"/api/v1/runs/{run}").json()["moves"] >= 1
