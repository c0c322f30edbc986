"""`tiles solve --givens STRING | --file FILE [--k K]`: count, solve and rate puzzles (FORMAT §12).

Prints one JSON object per puzzle per line. Every input is parsed before
anything is solved, so a malformed line prints nothing and exits 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from engine.report import parse_puzzle, read_puzzles, solve_report
from tilelib.errors import BadInput

MAX_N = 16  # the largest tile; the C kernel's limit
MAX_K = 1_000_000  # counting stops at k; past a million the count says nothing a player needs


def solve_command(
    givens: str | None = typer.Option(None, "--givens", help="One puzzle: n*n chars of 0, 1, '.', row-major."),
    file: Path | None = typer.Option(None, "--file", help="Puzzles, one per line ('#' comments, blank lines skipped)."),
    k: int = typer.Option(2, "--k", min=1, max=MAX_K, help="Count solutions up to K (default 2)."),
    n: int | None = typer.Option(None, "--n", help="Optional check: the puzzles' side."),
) -> None:
    """Count (to K), solve and rate puzzles; one JSON object per line."""
    if givens is not None and file is None:
        puzzles = [parse_puzzle(givens, n)]
    elif file is not None and givens is None:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise BadInput(f"cannot read {file}: {e}") from e
        puzzles = read_puzzles(text.splitlines(), n)
    else:
        raise BadInput("give exactly one of --givens STRING or --file FILE")
    big = next((p.n for p in puzzles if p.n > MAX_N), None)
    if big is not None:
        raise BadInput(f"tiles solve takes puzzles of side n <= {MAX_N}, got n={big}")
    for p in puzzles:
        typer.echo(json.dumps(solve_report(p, k)))


def register(app: typer.Typer) -> None:
    app.command("solve")(solve_command)
