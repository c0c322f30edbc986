"""Read docs/FORMAT.md's machine-checked parts: the ``golden=NAME`` code blocks and a few tables.

Shared by ``test_format_doc.py`` (the examples agree with the code) and
``test_independent_verifier.py`` (the verifier agrees with the examples).
"""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "FORMAT.md"

_BLOCK = re.compile(r"^```[^\n]*\bgolden=([\w-]+)[^\n]*\n(.*?)^```", re.S | re.M)


def text() -> str:
    return DOC.read_text(encoding="utf-8")


def blocks() -> dict[str, str]:
    """Every golden block's body by name (the body ends with the newline before the closing fence)."""
    out: dict[str, str] = {}
    for name, body in _BLOCK.findall(text()):
        assert name not in out, f"golden block {name} appears twice"
        out[name] = body
    return out


def fields(name: str) -> dict[str, str]:
    """A ``key: value`` golden block as a dict of stripped strings."""
    out = {}
    for line in blocks()[name].splitlines():
        if line.strip():
            k, _, v = line.partition(":")
            out[k.strip()] = v.strip()
    return out


def grid(rows: str) -> list[list[int]]:
    """``010110 010101 …`` → rows of ints."""
    return [[int(ch) for ch in row] for row in rows.split()]


def table_rows(header_start: str) -> list[list[str]]:
    """Cells of the markdown table whose header row starts with ``header_start`` (header and rule skipped)."""
    lines = text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith(header_start):
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip().strip("|").split("|")])
            return rows
    raise AssertionError(f"no table starting with {header_start!r} in {DOC}")
