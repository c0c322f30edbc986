"""Reading JSON from outside without letting it hurt us: a size cap and a nesting cap, one message.

Python's parser recurses once per nesting level: ``'[' * 200000`` ends in a RecursionError,
and a 10 GB file would be read whole. ``parse`` refuses both as ``BadInput`` naming what was
being read, so every reader of outside JSON (manifests, submissions, the service's bodies)
fails the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tilelib.errors import BadInput

MAX_DEPTH = 64


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse(data: str | bytes | bytearray, what: str, max_bytes: int) -> Any:
    """The JSON value of ``data``; BadInput (``"<what>: …"``) if it is too large, not UTF-8, not
    JSON (NaN and Infinity included), or nested deeper than ``MAX_DEPTH``."""
    if len(data) > max_bytes:
        raise BadInput(f"{what}: {len(data):,} bytes is over the {max_bytes:,}-byte limit")
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as err:
            raise BadInput(f"{what}: not UTF-8") from err
    try:
        value = json.loads(data, parse_constant=_no_constant)
    except RecursionError:
        raise BadInput(f"{what}: nested too deeply") from None  # the cause is a thousand-frame traceback
    except ValueError as e:
        raise BadInput(f"{what}: not valid JSON ({e})") from e
    if depth(data) > MAX_DEPTH:
        raise BadInput(f"{what}: nested deeper than {MAX_DEPTH} levels")
    return value


# In text that ``json.loads`` accepted, a backslash stands only inside a string and escapes the one
# character after it: each pair goes first, so no quote left is an escaped one. Then every byte but
# brackets and quotes goes (``bytes.translate``, one C pass: a board's manifest is mostly digits and
# commas), then the strings, now quotes around nothing but brackets. What is left is the skeleton.
_ESCAPE = re.compile(r"\\.", re.DOTALL)
_NOT_BRACKET_OR_QUOTE = bytes(b for b in range(256) if b not in b'[]{}"')
_STRING = re.compile(r'"[^"]*"')
_INNERMOST = re.compile(r"\[\]|\{\}")


def depth(text: str) -> int:
    """Nesting depth of valid JSON text, stopping past ``MAX_DEPTH``: 0 for a scalar, 1 for ``[1]``
    or ``{}``, 2 for ``{"a": []}``. Read from the text's brackets rather than by walking the parsed
    value (whose Python recursion cost a manifest check as much as parsing it): each pass removes
    the innermost pairs at once, so the passes count the levels."""
    if "\\" in text:
        text = _ESCAPE.sub("", text)
    marks = text.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKET_OR_QUOTE).decode("ascii")
    skeleton = _STRING.sub("", marks)
    level = 0
    while skeleton and level <= MAX_DEPTH:
        skeleton, level = _INNERMOST.sub("", skeleton), level + 1
    return level


def read_file(path, what: str, max_bytes: int) -> Any:
    """``parse`` of a file's bytes, refusing an oversized file before reading it."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as e:
        raise BadInput(f"{what}: cannot read {path}: {e.strerror}") from e
    return parse(data, what, max_bytes)
