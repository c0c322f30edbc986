"""``tilelib.jsonin``: the nesting depth read from the text's brackets equals the depth of the parsed
value (an independent walk of it, here), for any JSON text ``json.loads`` accepts — strings full of
brackets, quotes and escapes included — and ``parse`` refuses past ``MAX_DEPTH``, not before."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilelib import jsonin
from tilelib.errors import BadInput

TRICKY = st.text(alphabet='[]{}"\\/:,ab \n\t\u00e9\U0001f600\ud800', max_size=12)  # a lone surrogate too
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TRICKY
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY, inner, max_size=4),
    max_leaves=40,
)


def walked(v: Any) -> int:
    """The depth of a parsed value, by walking it: 0 for a scalar, containers count one level each."""
    if isinstance(v, dict):
        return 1 + max((walked(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((walked(x) for x in v), default=0)
    return 0


@settings(max_examples=400, deadline=None)
@given(VALUES, st.sampled_from([None, 0, 2]), st.booleans())
def test_depth_of_the_text_is_the_depth_of_the_value(value, indent, ascii_only):
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    assert jsonin.depth(text) == walked(json.loads(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 0),
        ('"[[[["', 0),
        ("[]", 1),
        ("{}", 1),
        ("[1, 2]", 1),
        ('{"a": []}', 2),
        ("{[]}".replace("[]", '"k": []'), 2),  # an object holding a list: not one level
        ('[{"]": "\\"[{"}, [[]]]', 3),
        ('["\\\\", [["\\\\\\""]]]', 3),  # a string ending in an escaped backslash, then one with a quote
    ],
)
def test_depth_examples(text, expected):
    json.loads(text)  # every example is JSON
    assert jsonin.depth(text) == expected


def test_parse_refuses_past_the_cap_and_not_at_it():
    at = "[" * jsonin.MAX_DEPTH + "]" * jsonin.MAX_DEPTH
    assert jsonin.parse(at, "x", 10_000) is not None
    past = "[" * (jsonin.MAX_DEPTH + 1) + "]" * (jsonin.MAX_DEPTH + 1)
    with pytest.raises(BadInput, match="nested deeper than 64 levels"):
        jsonin.parse(past, "x", 10_000)
    brackets_in_strings = json.dumps(["[" * 500, {"{" * 500: "]" * 500}])
    assert jsonin.parse(brackets_in_strings, "x", 10_000)[0] == "[" * 500
    with pytest.raises(BadInput, match="nested too deeply"):
        jsonin.parse("[" * 200_000 + "]" * 200_000, "x", 1_000_000)
