"""A tile as a language model reads it: the rules, the grid with its fixed cells, where each fixed cell
comes from (the board, or a solved neighbour across a seam), and what to answer.

One text for every door that speaks to models: the MCP server's ``read_tile_text`` tool and its
``tiles://`` resources, and the Gymnasium environments' ``text=True`` (``info["text"]``). It is
made from a tile view (``referee.wire.TileView`` as a dict) alone, so it shows exactly what the
view does — never a cell that is neither given nor known.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RULES = (
    "Takuzu rules: fill every '.' with 0 or 1 so that (1) no three equal cells are side by side in a "
    "row or a column, (2) every row and every column holds as many 0s as 1s, and (3) no two rows are "
    "the same and no two columns are the same. The cells already shown are fixed. A tile's border "
    "rows and columns are seams: the neighbouring tiles share those cells, so a cell known from a "
    "solved neighbour is as fixed as a given."
)


def sources(givens: str, known: str, puzzle: str) -> str:
    """Where each cell of a window comes from, one character a cell (the masks' layout): ``g`` the
    board shows it (``givens``), ``k`` known from a solved neighbour (``known``), ``s`` set in this
    attempt (a value ``puzzle`` holds that neither mask shows), ``.`` still to fill. What the text
    and the Gym envs' picture both draw."""
    return "".join(
        "g" if g == "1" else "k" if k == "1" else "." if p == "." else "s"
        for g, k, p in zip(givens, known, puzzle, strict=True)
    )


def tile_text(view: Mapping[str, Any]) -> str:
    """The tile of ``view`` (a ``TileView``'s fields) as text (module doc)."""
    n, puzzle = int(view["n"]), str(view["puzzle"])
    rows = [" ".join(puzzle[r * n : (r + 1) * n]) for r in range(n)]
    source = sources(view["givens"], view["known"], puzzle)
    source_rows = [" ".join(source[r * n : (r + 1) * n]) for r in range(n)]
    state = "solved" if view["solved"] else "playable now" if view["playable"] else "not playable yet"
    given, known, empty = source.count("g"), source.count("k"), puzzle.count(".")
    neighbours = ", ".join(str(t) for t in view["neighbours"]) or "none"
    return "\n".join(
        [
            f"Tile {view['tile']} of day {view['day']}: {n}×{n} cells, its top-left cell at board row "
            f"{view['y0']}, column {view['x0']}; {state}{' (the seed tile)' if view['seed'] else ''}.",
            f"Neighbours across its seams: {neighbours}.",
            RULES,
            f"Grid, row by row ('.' to fill: {empty} cells):",
            *rows,
            f"Where each fixed cell comes from (g: the board shows it, {given}; k: known from a solved "
            f"neighbour, {known}; '.': to fill"
            + (f"; s: set in this attempt, {source.count('s')}" if "s" in source else "")
            + "):",
            *source_rows,
            f"Answer with the whole grid: {n * n} characters of 0 and 1, row by row, no spaces.",
        ]
    )
