"""MCP tools at ``/mcp``: the player's side of the service for LLM agents, over the official MCP
Python SDK (``mcp``, 2.x: its server class is ``MCPServer``) on streamable HTTP.

Stateless: every request stands alone (no MCP session is kept), so any worker can answer it, and
each answer is one JSON body (no event stream). The tools are thin calls of ``referee.service.play``
— the same core as the HTTP API — so a move made here is judged, stored and scored exactly as one
made with ``POST /api/v1/runs/{run}/moves``; the run's token is a tool argument, never a header.

Every failure is a tool error (``isError``) whose text is ONE line: the project's own message for
an unknown day, run or tile, a wrong token, a move off the frontier or a batch over the limit
(``tilelib.errors``), the first problem of arguments off a tool's schema, or ``internal error:
TYPE`` for a bug; the runs database busy or away is the API's 503 line (``deps.public_line``: no
path, address or SQL). A malformed call never crashes the service and never answers 500.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from referee import wire as m
from referee.service import play
from referee.service.deps import Settings, client_address, public_line
from referee.service.runs import RunStore
from referee.tile_text import RULES, tile_text
from tilelib.errors import BadInput, TilesError, http_status

INSTRUCTIONS = (
    "Play the daily Takuzu board of the tiles referee. Call list_days, then start_run(day) and keep its "
    "run and token. Repeat: read_frontier(run) for the tiles you may play, read_tile(run, tile) for a "
    "tile's puzzle ('0'/'1' shown or known, '.' to solve; n·n characters row-major from the tile's "
    "top-left board cell), solve it (no three equal cells in a row or column, each row and column half "
    "0s and half 1s, no two rows or two columns alike) and submit_moves(run, token, moves) with each "
    "tile's whole n·n grid. A solved tile scores n²; read_score(run) gives the totals."
)

# The operation of ``referee.wire.OPERATIONS`` each tool performs, through the same use case of
# ``play``; and why each other operation has no tool. A language model plays from the frontier and one
# tile's text at a time: the bulk views made for drawing or for analysis would cost it thousands of
# tokens for nothing it can act on (``tests/test_api_contract.py`` holds the two against the API).
TOOL_OPERATIONS = {
    "list_days": "days",
    "start_run": "create_run",
    "read_frontier": "frontier",
    "read_tile": "run_tile",
    "read_tile_text": "run_tile",
    "submit_moves": "moves",
    "read_leaderboard": "leaderboard",
    "read_score": "score",
}
NO_TOOL = {
    "board": "the whole board's geometry, for drawing: a model reads tiles one by one (read_tile)",
    "cells": "every given cell as bit planes, for drawing: read_tile shows a tile's givens as text",
    "day_tile": "a tile outside any run: a model plays within its run (read_tile)",
    "solution": "answers, only once the day is over: nothing to play",
    "manifest": "tile hashes for verification, once the day is over: nothing to play",
    "day_analysis": "the analyzer's series for charts; read_leaderboard ranks the runs",
    "history": "the run's own moves, which the model sent and holds",
    "run_analysis": "the analyzer's per-batch series for charts; read_score has the totals",
}

SCORING = "A solved tile scores n² (its side squared); a run's reward is the sum over its solved tiles."
PLAY = (
    "Play {which} of the tiles referee. Start a run with start_run and keep its run id and token. "
    "Then repeat until read_frontier lists no tile: take a tile from read_frontier, read it with "
    "read_tile_text, fill its grid by the rules — reason cell by cell from the fixed cells, and do "
    "not guess — and send the whole grid with submit_moves. A tile you cannot settle yet can wait: "
    "solving its neighbours fixes more of its seam cells. Report read_score at the end."
)

RunArg = Annotated[str, Field(max_length=m.RUN_ID_MAX, description="The run's id, as start_run returned it.")]
DayArg = Annotated[str, Field(max_length=m.DAY_LENGTH, description="A day on offer, YYYY-MM-DD.")]
TileArg = Annotated[int, Field(ge=0, le=m.MAX_TILE_ID, description="Tile id.")]
TokenArg = Annotated[str, Field(max_length=256, description="The run's secret token, as start_run returned it.")]


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "error"


def _argument_line(err: ValidationError) -> str:
    """The first problem of a call's arguments, as ``where: what`` on one line."""
    e = err.errors()[0]
    where = ".".join(str(x) for x in e.get("loc", ()))
    what = e.get("msg", "invalid")
    if e.get("type") == "string_pattern_mismatch":
        what = "has a character or form the tool's input schema does not allow"
    return f"invalid arguments: {where}: {what}" if where else f"invalid arguments: {what}"


class _Tools(MCPServer):
    """``MCPServer`` whose every tool failure is one line (module doc)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as err:
            cause = err.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(_argument_line(cause)) from None
            if isinstance(cause, TilesError):
                raise ToolError(_one_line(public_line(cause, http_status(cause)))) from None
            if cause is not None:
                raise ToolError(f"internal error: {type(cause).__name__}") from None
            raise ToolError(_one_line(str(err))) from None


def _address(ctx: Context | None) -> str | None:
    """The client address of the HTTP request a tool call came in (what quotas count), if any."""
    try:
        return client_address(ctx.request_context.request) if ctx is not None else None
    except ValueError:  # outside a request
        return None


def create(store: RunStore, cfg: Settings) -> MCPServer:
    """The MCP server of the tools over ``store`` (``app.create_app`` mounts it at ``/mcp``)."""
    mcp = _Tools(name="tiles-referee", instructions=INSTRUCTIONS, version="1", log_level="WARNING")

    @mcp.tool(description="The days on offer, oldest first: day, board side G, tile count, seed tile.")
    async def list_days() -> list[m.DaySummary]:
        return [m.DaySummary.model_validate(d) for d in await play.days(store, cfg)]

    @mcp.tool(
        description="Start a run of a day. Returns its run id and its secret token (shown once: keep it; "
        "submit_moves needs it)."
    )
    async def start_run(
        day: DayArg,
        player: Annotated[m.PlayerName | None, Field(description="A name for the leaderboard (optional).")] = None,
        ctx: Context | None = None,
    ) -> m.RunCreated:
        return m.RunCreated.model_validate(await play.create_run(store, day, player, _address(ctx)))

    @mcp.tool(
        description="The tiles the run may play now (the seed tile first, then every unsolved tile "
        "sharing a seam with a solved one) and those it has solved."
    )
    async def read_frontier(run: RunArg) -> m.Frontier:
        return m.Frontier.model_validate(await play.frontier(store, run))

    @mcp.tool(
        description="A tile's puzzle for this run: 'puzzle' is n·n characters row-major from board cell "
        "(y0, x0), '0'/'1' where shown or known from solved tiles, '.' to solve."
    )
    async def read_tile(run: RunArg, tile: TileArg) -> m.TileView:
        return m.TileView.model_validate(await play.run_tile(store, run, tile))

    @mcp.tool(
        description="A tile's puzzle for this run as text to read: the rules, the grid row by row ('.' to "
        "fill), where each fixed cell comes from (the board, or a solved neighbour across a seam) and "
        "what to answer."
    )
    async def read_tile_text(run: RunArg, tile: TileArg) -> str:
        return tile_text(await play.run_tile(store, run, tile))

    @mcp.resource("tiles://rules", name="rules", mime_type="text/plain", description="The rules and the scoring.")
    def rules() -> str:
        return RULES + " " + SCORING

    @mcp.resource(
        "tiles://runs/{run}/tiles/{tile}",
        name="tile",
        mime_type="text/plain",
        description="A tile of a run as text (as read_tile_text gives it).",
    )
    async def tile_resource(run: str, tile: str) -> str:
        if len(run) > m.RUN_ID_MAX or not tile.isascii() or not tile.isdigit() or int(tile) > m.MAX_TILE_ID:
            raise BadInput(f"no tile {tile[:20]!r} of run {run[:80]!r}")
        return tile_text(await play.run_tile(store, run, int(tile)))

    @mcp.prompt(
        name="play_board",
        title="Play a day's board",
        description="Play a day's Takuzu board tile by tile with these tools (the newest day if none).",
    )
    def play_board(day: str | None = None) -> str:
        which = f"the board of {day}" if day else "the newest board (the last day list_days gives)"
        return PLAY.format(which=which)

    async def submit_moves(
        run: RunArg, token: TokenArg, moves: list[m.Move], ctx: Context | None = None
    ) -> m.MovesResult:
        batch = [mv.model_dump() for mv in moves]
        return m.MovesResult.model_validate(
            await play.moves(store, cfg, run, batch, token=token, address=_address(ctx), whole=True)
        )

    # the batch limit is this service's (--max-moves), known only here: set as an object, since the
    # module's annotations are strings read in its globals
    submit_moves.__annotations__["moves"] = Annotated[
        list[m.Move],
        Field(
            min_length=1,
            max_length=cfg.max_moves,
            description=f"The moves, judged in order: at most {cfg.max_moves} (this service's limit).",
        ),
    ]
    mcp.tool(
        description="Submit moves, judged in order: each is a tile id and its whole grid as n·n "
        "characters '0'/'1' row-major. One verdict per move; a solved tile scores n². "
        "A move that cannot be judged (an unknown tile, a grid of the wrong length, a tile already "
        "solved or off the frontier) refuses the whole batch: a tool error naming it, nothing stored."
    )(submit_moves)

    @mcp.tool(
        description="A day's leaderboard: each run's reward, tiles solved, moves, and what reaching the "
        "full reward took (batches, requests, seconds); 'by' orders it: reward (the default), "
        "or the fewest batches, requests or seconds among the runs that cleared the board."
    )
    async def read_leaderboard(
        day: DayArg,
        by: Annotated[m.Measure, Field(description="The order.")] = "reward",
        limit: Annotated[int, Field(ge=1, le=100, description="Most rows.")] = 10,
    ) -> m.Leaderboard:
        return m.Leaderboard.model_validate(await play.leaderboard(store, day, limit, by))

    @mcp.tool(description="A run's totals: tiles solved, reward (Σ n²), moves judged, frontier size.")
    async def read_score(run: RunArg) -> m.Score:
        return m.Score.model_validate(await play.score(store, run))

    return mcp
