"""Reading JSON from outside without letting it hurt us: a size cap and a nesting cap, one message.

Python's parser recurses once per nesting level: ``'[' * 200000`` ends in a RecursionError,
and a 10 GB file would be read whole. ``parse`` refuses both as ``BadInput`` naming what was
being read, so every reader of outside JSON (manifests, submissions, the service's bodies)
fails the same way.
"""

from __future__ import annotations

import json
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
    if _depth(value) > MAX_DEPTH:
        raise BadInput(f"{what}: nested deeper than {MAX_DEPTH} levels")
    return value


def _depth(v: Any, level: int = 1) -> int:
    """Nesting depth of a parsed value (stops descending past MAX_DEPTH)."""
    if level > MAX_DEPTH:
        return level
    if isinstance(v, dict):
        return max((_depth(x, level + 1) for x in v.values()), default=level)
    if isinstance(v, list):
        return max((_depth(x, level + 1) for x in v), default=level)
    return level - 1 if level > 1 else 0


def read_file(path, what: str, max_bytes: int) -> Any:
    """``parse`` of a file's bytes, refusing an oversized file before reading it."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as e:
        raise BadInput(f"{what}: cannot read {path}: {e.strerror}") from e
    return parse(data, what, max_bytes)
