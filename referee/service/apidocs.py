"""``/docs``: the API reference as one server-rendered HTML page, made from the service's own OpenAPI
document (``app._openapi``), so the page and ``/openapi.json`` never disagree.

FastAPI's own ``/docs`` (Swagger UI) and ``/redoc`` load their scripts and styles from a public
CDN: without internet they are blank, and they would need a Content-Security-Policy that trusts
that CDN. This page needs nothing but ``/static/docs.css``: no script at all, no inline style, no
request to another origin, so it passes ``security.CSP`` as it is.

For every path and method: the summary and description, the security it needs, each parameter
(where, required, schema with its limits, description), the request body, and every status the
operation declares with its meaning and schema; then every named schema with its properties. Every
text of the document is escaped.
"""

from __future__ import annotations

from html import escape
from typing import Any

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
REF = "#/components/schemas/"
_LIMITS = (
    ("minimum", "≥ {}"),
    ("maximum", "≤ {}"),
    ("exclusiveMinimum", "> {}"),
    ("exclusiveMaximum", "< {}"),
    ("minLength", "length ≥ {}"),
    ("maxLength", "length ≤ {}"),
    ("minItems", "items ≥ {}"),
    ("maxItems", "items ≤ {}"),
    ("pattern", "pattern {}"),
    ("format", "format {}"),
    ("default", "default {}"),
)


def _num(v: Any) -> str:
    """A number as written in a schema, without a float's ``.0`` (``minimum: 0.0`` reads as 0)."""
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def schema_html(s: Any) -> str:
    """A schema in one line of HTML: a named schema as a link to its section, a union as ``A | B``,
    an array as ``array of T``, then its limits (bounds, lengths, pattern, enum, default)."""
    if not isinstance(s, dict):
        return "any" if s is True else escape(str(s))
    if "$ref" in s:
        name = s["$ref"].removeprefix(REF)
        return f'<a href="#schema-{escape(name)}">{escape(name)}</a>'
    if "anyOf" in s or "oneOf" in s:
        kind = " | ".join(schema_html(x) for x in (s["anyOf"] if "anyOf" in s else s["oneOf"]))
    elif s.get("type") == "array":
        kind = "array of " + schema_html(s.get("items", True))
    elif s.get("type") == "object" and isinstance(s.get("additionalProperties"), dict):
        kind = "object of " + schema_html(s["additionalProperties"])
    else:
        kind = escape(str(s.get("type", "any")))
    limits = [fmt.format(escape(_num(s[k]) if k != "pattern" else s[k])) for k, fmt in _LIMITS if k in s]
    if "enum" in s:
        limits.append("one of " + ", ".join(escape(repr(v)) for v in s["enum"]))
    return kind + (f' <span class="limits">({"; ".join(limits)})</span>' if limits else "")


def _text(text: str | None) -> str:
    """A description as paragraphs (blank lines part them), escaped."""
    if not text:
        return ""
    return "".join(f"<p>{escape(part.strip())}</p>" for part in text.split("\n\n") if part.strip())


def _anchor(method: str, path: str, op: dict) -> str:
    """The id of an operation's section: ``op-`` and its operationId."""
    return "op-" + escape(op.get("operationId") or f"{method}-{path}")


def _parameters(op: dict) -> str:
    """The table of an operation's parameters (none: nothing)."""
    params = op.get("parameters", [])
    if not params:
        return ""
    rows = "".join(
        f"<tr><td><code>{escape(p['name'])}</code></td><td>{escape(p.get('in', ''))}</td>"
        f"<td>{'yes' if p.get('required') else 'no'}</td><td>{schema_html(p.get('schema', {}))}</td>"
        f"<td>{escape(p.get('description') or p.get('schema', {}).get('description', ''))}</td></tr>"
        for p in params
    )
    return (
        "<h3>Parameters</h3><table><thead><tr><th>name</th><th>in</th><th>required</th><th>schema</th>"
        f"<th>description</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _content(content: dict) -> str:
    """Each media type of a body or an answer with its schema."""
    return "; ".join(
        f"<code>{escape(media)}</code>: {schema_html(v.get('schema', {}))}" for media, v in content.items()
    )


def _request_body(op: dict) -> str:
    """Whether a body is required, its media types and schema."""
    body = op.get("requestBody")
    if not body:
        return ""
    need = "required" if body.get("required") else "optional"
    return f"<h3>Request body</h3><p>{need}; {_content(body.get('content', {}))}</p>{_text(body.get('description'))}"


def _responses(anchor: str, op: dict) -> str:
    """Every status the operation declares: meaning, body, headers (one row each, ``#ANCHOR-STATUS``)."""
    rows = []
    for status, r in op.get("responses", {}).items():
        headers = ", ".join(
            f"<code>{escape(h)}</code>{' (always)' if v.get('required') else ''}: {escape(v.get('description', ''))}"
            for h, v in r.get("headers", {}).items()
        )
        rows.append(
            f'<tr id="{anchor}-{escape(status)}"><td class="status">{escape(status)}</td>'
            f"<td>{escape(r.get('description', ''))}</td><td>{_content(r.get('content', {}))}</td>"
            f"<td>{headers}</td></tr>"
        )
    return (
        "<h3>Responses</h3><table><thead><tr><th>status</th><th>meaning</th><th>body</th><th>headers</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _security(op: dict, schemes: dict) -> str:
    """What the operation needs sent: each security scheme by name, how it is sent and what it is."""
    parts = []
    for name in (n for req in op.get("security", []) for n in req):
        sch = schemes.get(name, {})
        how = (
            "<code>Authorization: Bearer TOKEN</code>"
            if sch.get("scheme", "").lower() == "bearer"
            else escape(f"{sch.get('type', '')} {sch.get('scheme', sch.get('in', ''))}".strip())
        )
        parts.append(f"<code>{escape(name)}</code>, sent as {how}: {escape(sch.get('description', ''))}")
    return "".join(f'<p class="auth">Needs {p}</p>' for p in parts)


def _operation(method: str, path: str, op: dict, schemes: dict) -> str:
    """One operation's section (module doc)."""
    anchor = _anchor(method, path, op)
    return (
        f'<section class="op" id="{anchor}">'
        f'<h2><span class="method {method}">{method.upper()}</span> <code>{escape(path)}</code></h2>'
        f'<p class="summary">{escape(op.get("summary", ""))}</p>{_text(op.get("description"))}'
        f"{_security(op, schemes)}{_parameters(op)}{_request_body(op)}{_responses(anchor, op)}</section>"
    )


def _schema_section(name: str, s: dict) -> str:
    """A named schema's section: its description and a row per property (or its one-line form)."""
    props = s.get("properties", {})
    required = set(s.get("required", []))
    head = f'<section class="schema" id="schema-{escape(name)}"><h3>{escape(name)}</h3>{_text(s.get("description"))}'
    if not props:
        return head + f"<p>{schema_html({k: v for k, v in s.items() if k != 'description'})}</p></section>"
    rows = "".join(
        f"<tr><td><code>{escape(p)}</code></td><td>{'yes' if p in required else 'no'}</td>"
        f"<td>{schema_html(v)}</td><td>{escape(v.get('description', ''))}</td></tr>"
        for p, v in props.items()
    )
    return (
        head + "<table><thead><tr><th>property</th><th>required</th><th>schema</th><th>description</th></tr>"
        f"</thead><tbody>{rows}</tbody></table></section>"
    )


def operations(doc: dict) -> list[tuple[str, str, dict]]:
    """(method, path, operation) of every operation of ``doc``, in the document's order."""
    return [(m, path, op) for path, ops in doc.get("paths", {}).items() for m, op in ops.items() if m in METHODS]


def render(doc: dict) -> str:
    """The whole page for the OpenAPI document ``doc``."""
    info = doc.get("info", {})
    comps = doc.get("components", {})
    schemes = comps.get("securitySchemes", {})
    ops = operations(doc)
    toc = "".join(
        f'<li><a href="#{_anchor(m, p, op)}"><span class="method {m}">{m.upper()}</span> '
        f"<code>{escape(p)}</code></a> {escape(op.get('summary', ''))}</li>"
        for m, p, op in ops
    )
    schemas = "".join(_schema_section(n, s) for n, s in comps.get("schemas", {}).items())
    sections = "".join(_operation(m, p, op, schemes) for m, p, op in ops)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(info.get('title', 'API'))} · API reference</title>"
        '<link rel="stylesheet" href="/static/docs.css"><link rel="icon" href="data:,"></head><body>'
        f"<header><h1>{escape(info.get('title', 'API'))} <small>version {escape(str(info.get('version', '')))}"
        f"</small></h1>{_text(info.get('description'))}"
        f'<p>The same as a machine-readable document: <a href="/openapi.json">/openapi.json</a> '
        f"(OpenAPI {escape(str(doc.get('openapi', '')))}). The MCP tools answer at <code>POST /mcp</code>; "
        'the play page is <a href="/">/</a>. Every error is <code>{"error": "one line"}</code>.</p>'
        f"</header><nav><h2>Operations</h2><ul>{toc}</ul></nav><main>{sections}"
        f'<section id="schemas"><h2>Schemas</h2>{schemas}</section></main></body></html>\n'
    )
