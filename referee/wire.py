"""The typed shapes of ``/api/v1``: one pydantic model per request and response body.

These models are the API's contract as the OpenAPI document shows it (``/openapi.json``): every
field says whether it is a value or a mask, its bit or cell order, and its unit. Handlers return
the plain dicts the views build (``referee.service.boards``, ``runs``, ``analysis``) and FastAPI
checks them against these models on the way out, so an answer can never drift off its schema.
Field order is the JSON's key order. Request models are strict (no coercion: ``"5"`` is not a
tile id) and refuse unknown keys' wrong types, so a malformed body is a 400 before anything is
judged or stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, RootModel, StrictInt, StrictStr

Day = Annotated[str, Field(description="A UTC calendar date, YYYY-MM-DD.", examples=["2026-11-29"])]
RunId = Annotated[str, Field(description="The run's id, as returned when the run was created.")]
TileId = Annotated[int, Field(ge=0, description="A tile id: its position in the board's tile list.")]
Clue = Annotated[
    list[int],
    Field(
        min_length=3,
        max_length=3,
        description=(
            "[row, col, value]: a clue cell in board coordinates (row 0 at the top, col 0 at the left) and "
            "its value 0/1. The manifest's clue is the same [row, col] pair (FORMAT §9) with the value added."
        ),
    ),
]
BoardSide = Annotated[int, Field(description="Board side in cells: the board is G×G.")]
ProofStatus = Annotated[
    str, Field(description="The manifest's proof status (FORMAT §9): 'frontier', 'unique' or 'ambiguous'.")
]
SeedTile = Annotated[int, Field(description="The tile every run starts from.")]
DayOver = Annotated[
    bool, Field(description="True once the day is past (UTC): solutions and the manifest are then public.")
]
RunReward = Annotated[int, Field(description="Σ n² over the run's solved tiles (cells solved).")]
RunSolved = Annotated[int, Field(description="Tiles the run has solved.")]
RunMoves = Annotated[int, Field(description="Moves judged in the run so far, accepted or not.")]
Mask = Annotated[
    str,
    Field(
        pattern=r"^[01]*$",
        description=(
            "A mask, not values: n·n characters, '1' where the property holds, row-major from board cell "
            "(y0, x0) of the tile's window (the same layout as 'puzzle')."
        ),
    ),
]


class Error(BaseModel):
    """Every 4xx/5xx answer: one line saying what was wrong."""

    error: str = Field(description="One line, no newline: what was wrong and, where it helps, what to send.")


# ------------------------------------------------------------------ days


class DaySummary(BaseModel):
    day: Day
    G: BoardSide
    tiles: int = Field(description="Number of tiles; ids are 0..tiles-1.")
    status: ProofStatus
    seed_tile: SeedTile
    over: DayOver


class Days(RootModel[list[DaySummary]]):
    """The days on offer, oldest first."""


class BoardTile(BaseModel):
    id: int = Field(description="Tile id.")
    x0: int = Field(description="Column of the window's top-left board cell.")
    y0: int = Field(description="Row of the window's top-left board cell.")
    n: int = Field(ge=6, le=16, description="Side in cells; the window is board rows y0..y0+n-1, cols x0..x0+n-1.")
    colour: int = Field(ge=0, description="A colour class (0..6) so that tiles sharing a cell differ: for drawing.")


class Zone(BaseModel):
    """A zone as in the manifest (FORMAT §9): cells no tile owns, shown as givens."""

    id: int = Field(description="Zone id (its position in the list).")
    rects: list[Annotated[list[int], Field(min_length=4, max_length=4)]] = Field(
        description=(
            "[x, y, w, h] rectangles in pitch space (FORMAT §6): pitch area [x, x+w) × [y, y+h), i.e. "
            "board rows y..y+h and cols x..x+w, both ends included (the convention of tile windows)."
        )
    )


class PublicBoard(BaseModel):
    """What anyone may see of a day: geometry, zones, the seed tile, the clue cells. Never a solution."""

    day: Day
    G: BoardSide
    status: ProofStatus
    seed_tile: SeedTile
    over: DayOver
    board: str = Field(
        pattern=r"^[0-9a-f]{64}$",
        description=("The manifest's digest (sha256 of its text, FORMAT §9): names the board runs belong to."),
    )
    tiles: list[BoardTile]
    zones: list[Zone]
    clues: list[Clue] = Field(description="Every clue cell with its value.")


class Cells(BaseModel):
    """Every given cell of the board as bit planes over the G×G board."""

    G: BoardSide
    givens: str = Field(
        description=(
            "A MASK, base64 of numpy.packbits: G·G bits, cell (row, col) is bit number row·G + col, "
            "most significant bit of each byte first, the last byte padded with 0 bits. 1 where the cell "
            "is shown: a given of some tile (zone cells on a tile's edge and clue cells included)."
        )
    )
    values: str = Field(
        description=(
            "VALUES, the same layout as 'givens': 1 where a shown cell holds 1; 0 where it holds 0 or is "
            "not shown (read it together with 'givens')."
        )
    )
    tile_cells: str = Field(
        description=(
            "A MASK, the same layout: 1 where the cell lies in at least one tile's window; 0 on a cell "
            "of a zone no tile covers (nothing to solve there)."
        )
    )


class TileView(BaseModel):
    """A tile's puzzle in board position for a run (or with the board's givens only). Never the solution
    of a cell that is neither given nor known from a tile the run has solved."""

    day: Day
    tile: int = Field(description="Tile id.")
    x0: int = Field(description="Column of the window's top-left board cell.")
    y0: int = Field(description="Row of the window's top-left board cell.")
    n: int = Field(ge=6, le=16, description="Side in cells.")
    seed: bool = Field(description="True for the seed tile.")
    solved: bool = Field(description="True if this run has solved the tile.")
    playable: bool = Field(
        description="True if a move on it would be judged now: the seed tile, or a tile "
        "sharing a seam (at least 2 board cells) with a solved tile; not solved."
    )
    neighbours: list[int] = Field(description="Ids of the tiles it shares a seam with, ascending.")
    puzzle: str = Field(
        pattern=r"^[01.]*$",
        description=(
            "VALUES: n·n characters row-major from board cell (y0, x0): '0'/'1' where the cell is shown (a "
            "given, a zone cell, a clue) or known from a solved neighbour, '.' where it is to be solved. "
            "The puzzle string `tiles solve` reads."
        ),
    )
    givens: Mask = Field(
        description="MASK of the cells shown by the board itself: the tile's givens, a "
        "neighbour's on the seams, zone cells, clues (same layout as 'puzzle')."
    )
    known: Mask = Field(description="MASK of the cells known from the run's solved tiles and not among 'givens'.")
    zone: Mask = Field(description="MASK of the window's zone cells (given, belonging to no tile).")
    clues: list[Clue] = Field(description="The clue cells in this window with their values, board coordinates.")


class Solution(BaseModel):
    day: Day
    tile: int = Field(description="Tile id.")
    cells: str = Field(
        pattern=r"^[01]*$", description="VALUES: the solution window, n·n chars row-major from board cell (y0, x0)."
    )


class ManifestTile(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: int = Field(description="Tile id (its position in the list).")
    x0: int = Field(description="Column of the window's top-left board cell.")
    y0: int = Field(description="Row of the window's top-left board cell.")
    n: int = Field(description="Side in cells.")
    hash: str = Field(description="The tile's content hash (64 hex digits) in the library.")
    t: int = Field(ge=0, le=15, description="The symmetry (FORMAT §3) that lays the stored tile on the board.")


class ManifestBody(BaseModel):
    """The day's manifest, byte for byte as FORMAT §9 writes it (keys beyond these may appear)."""

    model_config = ConfigDict(extra="allow")
    format: str = Field(description="The manifest format and version, 'tiles-manifest/1'.")
    day: Day
    board: dict[str, int] = Field(
        description="{'cells': G, 'pitch': G - 1}: the board's side in cells and in pitch units."
    )
    seed_commit: str = Field(description="sha256 of the day's 32-byte seed, 64 lower-case hex digits (FORMAT §9).")
    packer: dict[str, Any] = Field(description="The packer that drew the geometry: {'name', 'version', 'params'}.")
    seed_tile: SeedTile
    tiles: list[ManifestTile]
    zones: list[Zone]
    clues: list[Annotated[list[int], Field(min_length=2, max_length=2)]] = Field(
        description="[row, col] pairs, board coordinates."
    )
    status: ProofStatus
    stats: dict[str, Any] = Field(description="Free-form build statistics (FORMAT §9).")


# What several answers say in the same words, declared once.
PlayerShown = Annotated[str | None, Field(description="The player's name, or null.")]
MoveReward = Annotated[int, Field(description="n² if correct, else 0.")]
Reason = Annotated[str | None, Field(description="Why not accepted or not correct; null if correct.")]


# ------------------------------------------------------------------ runs


# The one rule for a player's name (the store checks the same pattern): 1..40 characters, none of them
# a control character (C0, C1) or an invisible formatting one (soft hyphen, zero-width and
# direction marks and overrides, word joiners, BOM) that could make one name look like another.
# Letters and symbols of any script, emoji included, are fine.
PLAYER_PATTERN = r"^[^\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]{1,40}$"
# The one rule for an Idempotency-Key header (the store checks it too): 1..255 visible ASCII
# characters other than '"', bare or in double quotes (the IETF draft writes a quoted string).
KEY_PATTERN = r'^(?:"[!#-~]{1,255}"|[!#-~]{1,255})$'


PlayerName = Annotated[StrictStr, Field(min_length=1, max_length=40, pattern=PLAYER_PATTERN)]


class RunCreate(BaseModel):
    """Optional body of a new run."""

    model_config = ConfigDict(extra="ignore")
    player: PlayerName | None = Field(
        None,
        description=(
            "A name shown on the leaderboard: 1..40 characters of any script, no control characters and "
            "no invisible formatting ones (zero-width, direction overrides)."
        ),
    )


class NewRun(RootModel[RunCreate | None]):
    """The body of POST /days/{day}/runs: a RunCreate object, null, or no body at all."""


class RunKey(BaseModel):
    run: RunId


class RunToken(RunKey):
    token: str = Field(description="Send it as 'Authorization: Bearer TOKEN' on every write of this run.")


class Score(RunKey):
    """A run's totals."""

    day: Day
    player: PlayerShown
    solved: RunSolved
    reward: RunReward
    moves: RunMoves
    frontier: int = Field(description="Tiles playable now.")


# the score's fields with the token after the run's id: pydantic orders the fields of the bases from
# the last in the method resolution order (RunKey, RunToken) to the first (Score); the answer's bytes
# are the same as when the fields were written out here (tests/test_api_contract.py)
class RunCreated(Score, RunToken):
    """A new run: its id, its secret token (shown once, never again), and its score (all zero; the
    frontier is the seed tile, 1)."""


class Frontier(BaseModel):
    run: RunId
    tiles: list[int] = Field(description="Ids of the tiles playable now, ascending.")
    solved: list[int] = Field(description="Ids of the tiles solved, ascending.")


def _integral(v: Any) -> Any:
    """JSON Schema's integer includes 400.0 (a number with no fraction): take it as 400; anything else
    (a string, a bool, 0.5) goes on to the strict int check unchanged."""
    return int(v) if isinstance(v, float) and v.is_integer() else v


JsonInt = Annotated[StrictInt, BeforeValidator(_integral)]


# The largest tile id any board can have: G <= 4096 cells (pitch 4095), squares of pitch side >= 5.
MAX_TILE_ID = (4095 // 5) ** 2 - 1
API = "/api/v1"  # the prefix of every route of the API: the app mounts its routers under it, clients call it
MAX_MOVES = 64  # moves in one request's batch (the service's default limit; ``tiles referee serve`` may lower it)
# The limits of the arguments every door takes (the HTTP routes' parameters, the MCP tools' arguments),
# declared once here: a run id a request may name, a day as YYYY-MM-DD.
RUN_ID_MAX = 64
DAY_LENGTH = 10


class Move(BaseModel):
    """One move: a tile's whole window as it lies on the board."""

    model_config = ConfigDict(extra="ignore")
    tile: JsonInt = Field(ge=0, le=MAX_TILE_ID, description="Tile id.")
    cells: StrictStr = Field(
        pattern=r"^[01]*$",
        max_length=256,
        description=(
            "VALUES: n·n chars '0'/'1', row-major from board cell (y0, x0). Another length is judged as "
            "not accepted (the verdict says why)."
        ),
    )


class MovesRequest(BaseModel):
    """A batch of moves, judged in order in one transaction."""

    model_config = ConfigDict(extra="ignore")
    run: StrictStr | None = Field(None, description="Optional; must equal the run in the path.")
    moves: list[Move] = Field(
        description="The moves, judged in order; later moves may build on earlier ones. "
        "At most the service's --max-moves (default 64; maxItems here), else 413."
    )


class Verdict(BaseModel):
    """The judge's verdict on one move (FORMAT §14)."""

    tile: int = Field(description="The move's tile id.")
    accepted: bool = Field(description="False if malformed, a replay, or off the frontier (then 'reason').")
    correct: bool = Field(description="True if accepted and equal to the solution: the tile is solved.")
    reward: MoveReward
    reason: Reason


class MovesResult(BaseModel):
    run: RunId
    verdicts: list[Verdict] = Field(description="One per move, in order.")
    score: Score


class HistoryMove(BaseModel):
    id: int = Field(description="The move's id in the runs file: increasing, the cursor for 'after'.")
    tile: int | None = Field(description="Tile id (null if the move named no tile of this board).")
    accepted: bool = Field(description="False if malformed or a replay (then 'reason').")
    correct: bool = Field(description="True if accepted and equal to the solution: the move solved the tile.")
    reward: MoveReward
    reason: Reason
    at: int = Field(description="When it was judged: Unix time, whole seconds (UTC).")


class History(BaseModel):
    run: RunId
    moves: list[HistoryMove] = Field(description="Oldest first; cells are not echoed.")


class RunBatch(BaseModel):
    """One batch (one moves request) of a run."""

    batch: int = Field(description="1-based ordinal of the batch within the run.")
    t: float = Field(description="Seconds from the run's creation to the batch (wall clock, 3 decimals).")
    moves: int = Field(description="Moves in the batch.")
    solved: int = Field(description="Tiles the batch solved.")
    reward: int = Field(description="Σ n² of the tiles the batch solved.")
    mean_n: float | None = Field(description="Mean side n of the tiles the batch solved; null if none.")
    n_sum: int = Field(description="Sum of the sides n of the tiles the batch solved (mean_n = n_sum / solved).")
    total_reward: int = Field(description="Reward of the run up to and including this batch.")
    total_solved: int = Field(description="Tiles solved up to and including this batch.")
    mean_n_so_far: float | None = Field(description="Mean n of every tile solved so far; null if none.")


class RunAnalysis(BaseModel):
    run: RunId
    day: Day
    batches: list[RunBatch]


class Tally(BaseModel):
    """Totals over some batches: a run's (``RunTotals``) or a time bucket's (``TimeBucket``)."""

    batches: int = Field(description="Batches (moves requests) counted.")
    reward: int = Field(description="Their reward: Σ n² over the tiles they solved.")
    solved: int = Field(description="Tiles they solved.")
    mean_n: float | None = Field(description="Mean n of those tiles; null if none.")


class RunTotals(Tally, RunKey):  # run first, then the tally (the order as RunCreated's says)
    """One run's batches."""


class DayBatch(BaseModel):
    """Batch k of every run that made at least k batches."""

    batch: int = Field(description="The batch ordinal k (1-based).")
    runs: int = Field(description="Runs that made a k-th batch.")
    mean_reward: float = Field(description="Mean reward of their k-th batches.")
    solved: int = Field(description="Tiles solved in those batches.")
    mean_n: float | None = Field(description="Mean n of those tiles (weighted by tiles); null if none.")


class BucketStart(BaseModel):
    t: float = Field(description="Start of the bucket: seconds after the day's first batch.")


class TimeBucket(Tally, BucketStart):  # t first, then the tally
    """The batches of every run of the day made in one wall-clock bucket."""


class DayAnalysis(BaseModel):
    day: Day
    runs: list[RunTotals]
    batches: list[DayBatch]
    bucket: float = Field(description="Width of a time bucket in seconds.")
    time: list[TimeBucket] = Field(description="Wall-clock buckets; empty ones are left out.")


Measure = Literal["reward", "batches", "requests", "time"]  # the leaderboard's orders (``ranking``)


class LeaderboardRow(BaseModel):
    rank: int = Field(
        description="1 for the best in the order asked ('by'): by reward, then tiles solved, then "
        "age; or, among runs that cleared the board, fewest batches, requests or seconds."
    )
    run: RunId
    player: PlayerShown
    created: int = Field(description="Unix time (seconds) the run was created.")
    reward: RunReward
    solved: RunSolved
    moves: RunMoves
    cleared: bool = Field(description="The run solved every tile: the full reward.")
    batches: int = Field(description="Batches of moves up to the one that cleared the board (so far, if not).")
    requests: int = Field(
        description="Requests naming the run until it cleared the board (so far, if not): reads and moves."
    )
    time: float | None = Field(
        description="Seconds from the run's creation to the batch that cleared the board; null if it has not."
    )


class Leaderboard(BaseModel):
    day: Day
    by: Measure = Field(description="The order of the rows.")
    runs: list[LeaderboardRow]


# ------------------------------------------------------------------ operations


@dataclass(frozen=True)
class Operation:
    """One operation of ``/api/v1``: its method, its path under ``API`` (parameters in braces, as
    FastAPI and OpenAPI write them), the model of its answer, its summary and the errors it may
    answer. Declared once here (``OPERATIONS``) for both ends: the service's routes take all of it
    (``referee.service.deps.operation``), the client its request (``players.client``)."""

    method: str
    path: str
    answer: type[BaseModel]
    summary: str
    refusals: tuple[int, ...]  # the error statuses it may answer, each with the one ``Error`` model
    auth: bool = False  # a write that needs the run's token (its 401 and 403 carry the challenge)
    status: int = 200  # of a success


# Every operation, by its name: the route's handler, the OpenAPI ``operationId``, the use case of
# ``referee.service.play`` and the client's method all bear it. In the OpenAPI document's order.
OPERATIONS = {
    "days": Operation("GET", "/days", Days, "The days on offer", refusals=(400,)),
    "board": Operation(
        "GET",
        "/days/{day}",
        PublicBoard,
        "A day's public board: tiles (id, x0, y0, n, colour), zones, seed tile, clue cells with values",
        refusals=(400, 404),
    ),
    "cells": Operation(
        "GET",
        "/days/{day}/cells",
        Cells,
        "Every given cell: base64 packbits bit planes of the G×G board",
        refusals=(400, 404),
    ),
    "day_tile": Operation(
        "GET",
        "/days/{day}/tiles/{tile}",
        TileView,
        "A tile's puzzle with the board's givens only (no run)",
        refusals=(400, 404),
    ),
    "solution": Operation(
        "GET",
        "/days/{day}/tiles/{tile}/solution",
        Solution,
        "A tile's solution (once the day is over)",
        refusals=(400, 403, 404),
    ),
    "manifest": Operation(
        "GET",
        "/days/{day}/manifest",
        ManifestBody,
        "The full manifest with tile hashes, byte for byte (once the day is over)",
        refusals=(400, 403, 404),
    ),
    "leaderboard": Operation(
        "GET",
        "/days/{day}/leaderboard",
        Leaderboard,
        "A day's runs by reward, or by what reaching the full reward took",
        refusals=(400, 404, 503),
    ),
    "day_analysis": Operation(
        "GET",
        "/days/{day}/analysis",
        DayAnalysis,
        "The analyzer over a day: reward and mean n per batch ordinal and per time bucket",
        refusals=(400, 404, 503),
    ),
    "create_run": Operation(
        "POST",
        "/days/{day}/runs",
        RunCreated,
        "Create a run: returns its id and secret token (shown once)",
        refusals=(400, 404, 413, 415, 429, 503),
        status=201,
    ),
    "score": Operation("GET", "/runs/{run}", Score, "A run's score", refusals=(400, 404, 503)),
    "frontier": Operation(
        "GET",
        "/runs/{run}/frontier",
        Frontier,
        "The tiles the run may play now, and those it has solved",
        refusals=(400, 404, 503),
    ),
    "run_tile": Operation(
        "GET",
        "/runs/{run}/tiles/{tile}",
        TileView,
        "A tile's puzzle in board position for this run (cells known from its solved tiles)",
        refusals=(400, 404, 503),
    ),
    "moves": Operation(
        "POST",
        "/runs/{run}/moves",
        MovesResult,
        "Submit moves (needs the run's token); one verdict per move, judged in order",
        refusals=(400, 401, 403, 404, 409, 413, 415, 429, 503),
        auth=True,
    ),
    "history": Operation(
        "GET", "/runs/{run}/history", History, "A run's moves, oldest first, after a cursor", refusals=(400, 404, 503)
    ),
    "run_analysis": Operation(
        "GET",
        "/runs/{run}/analysis",
        RunAnalysis,
        "The analyzer of a run: reward and mean n per batch",
        refusals=(400, 404, 503),
    ),
}
