"""`tiles library generate`: make K tiles of side n and append them to the library (FORMAT §4, §12).

Thin: parse and validate (``GenParams.make``, the seed) before touching the
library, call ``generator.batch.append_generated``, print one summary line.
Deterministic for a seed: the same seed and options give the same tiles
whatever ``--workers`` is. Without ``--seed`` a fresh one is drawn and printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tiles_cli.library import library_app
from tiles_cli.options import LibraryOpt
from tiles_cli.progress import progress
from tilelib.errors import BadInput


def register(app: typer.Typer) -> None:
    """Commands live on ``library_app`` (registered at import); nothing to add to the root app."""


MAX_COUNT = 10_000_000   # one run's tiles; a year of libraries is ~2M


@library_app.command("generate")
def generate_command(
    n: int = typer.Option(..., "--n", help="Tile side: 6, 8, 10, 12, 14 or 16."),
    count: int = typer.Option(..., "--count", help="How many tiles to generate."),
    seam_mask: int = typer.Option(0, "--seam-mask", help="Sides assumed known when thinning: top 1, right 2, bottom 4, left 8."),
    m_max: Optional[int] = typer.Option(None, "--m-max", help="Most solutions a tile's own givens may allow (default by n: 2, 3 or 4)."),
    workers: int = typer.Option(1, "--workers", help="Worker processes (the output does not depend on it)."),
    seed: Optional[str] = typer.Option(None, "--seed", help="64 hex digits; default a fresh random seed (printed)."),
    min_ladder: int = typer.Option(0, "--min-ladder", help="Reject tiles whose ladder level is below this (0..5)."),
    max_ladder: int = typer.Option(5, "--max-ladder", help="Reject tiles whose ladder level is above this (0..5)."),
    level: int = typer.Option(0, "--level", help="Target level 1..4: thin only while the ladder with levels "
                              "1..LEVEL still solves, and reject tiles it solves below LEVEL (Unruly's rule), so "
                              "every tile rates exactly LEVEL. 0 (default): thin to a minimal puzzle."),
    needs_unique: bool = typer.Option(False, "--needs-unique", help="Keep only tiles that need line uniqueness (L3)."),
    needs_bifurcation: bool = typer.Option(False, "--needs-bifurcation", help="Keep only tiles that need bifurcation (L4)."),
    library: Path = LibraryOpt,
) -> None:
    """Generate tiles (random solution, seeded thinning, features) and append them to the library."""
    from generator.batch import append_generated, new_seed
    from generator.make import GenParams, Targets
    from tilelib.rng import seed_from_hex

    params = GenParams.make(n, m_max, seam_mask,
                            Targets(min_ladder=min_ladder, needs_unique=needs_unique,
                                    needs_bifurcation=needs_bifurcation, max_ladder=max_ladder, level=level))
    if not 1 <= count <= MAX_COUNT:
        raise BadInput(f"--count must be in 1..{MAX_COUNT:,}, got {count} (run it again for more)")
    if workers < 1:
        raise BadInput(f"--workers must be at least 1, got {workers}")
    seed_bytes = seed_from_hex(seed) if seed is not None else new_seed()
    with progress(f"generating n={n}", total=count) as bar:
        rep = append_generated(library, params, count, seed_bytes, workers=workers, on_tile=bar.advance)
    typer.echo(f"generated {rep.generated:,} n={n} tiles ({params.describe()}), "
               f"{rep.inserted:,} new, {rep.duplicates:,} already in {library}; seed {rep.seed.hex()}")
