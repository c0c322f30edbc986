"""`tiles library generate`: make K tiles of side n and append them to the library (FORMAT §4, §12).

Thin: parse and validate (``GenParams.make``, the seed) before touching the
library, call ``generator.batch.append_generated``, print one summary line.
Deterministic for a seed: the same seed and options give the same tiles
whatever ``--workers`` is. Without ``--seed`` a fresh one is drawn and printed.
"""

from __future__ import annotations

from pathlib import Path

import typer

from tilelib.errors import BadInput
from tiles_cli.daily import DEFAULT_PROFILE
from tiles_cli.library import library_app
from tiles_cli.options import LibraryOpt
from tiles_cli.progress import progress


def register(app: typer.Typer) -> None:
    """Add this module's commands to `tiles library` (the group's own module adds the group)."""
    library_app.command("generate")(generate_command)


LADDER_TOP = 5  # the ladder's top level: --max-ladder at it sets no limit
MAX_COUNT = 10_000_000  # one run's tiles; a year of libraries is ~2M


def generate_command(
    n: int | None = typer.Option(None, "--n", help="Tile side: 6, 8, 10, 12, 14 or 16."),
    count: int | None = typer.Option(None, "--count", help="How many tiles to generate."),
    stock: bool = typer.Option(
        False,
        "--stock",
        help="Top up the fair rule's stock instead: per n >= 10, replace "
        "what the last night drew (at least --nights nights of draws), with the edge mix "
        "of the misses.",
    ),
    nights: int = typer.Option(3, "--nights", help="With --stock: nights of draws the stock should hold."),
    profile: str = typer.Option(
        DEFAULT_PROFILE,
        "--profile",
        help="With --stock: the difficulty profile the "
        "builds use (as tiles daily build --profile); tiles are thinned to its levels.",
    ),
    seam_mask: int = typer.Option(
        0, "--seam-mask", help="Sides assumed known when thinning: top 1, right 2, bottom 4, left 8."
    ),
    m_max: int | None = typer.Option(
        None, "--m-max", help="Most solutions a tile's own givens may allow (default by n: 2, 3 or 4)."
    ),
    workers: int = typer.Option(1, "--workers", help="Worker processes (the output does not depend on it)."),
    seed: str | None = typer.Option(None, "--seed", help="64 hex digits; default a fresh random seed (printed)."),
    min_ladder: int = typer.Option(0, "--min-ladder", help="Reject tiles whose ladder level is below this (0..5)."),
    max_ladder: int = typer.Option(
        LADDER_TOP, "--max-ladder", help="Reject tiles whose ladder level is above this (0..5)."
    ),
    level: int = typer.Option(
        0,
        "--level",
        help="Target level 1..4: thin only while the ladder with levels "
        "1..LEVEL still solves, and reject tiles it solves below LEVEL (Unruly's rule), so "
        "every tile rates exactly LEVEL. 0 (default): thin to a minimal puzzle.",
    ),
    needs_unique: bool = typer.Option(False, "--needs-unique", help="Keep only tiles that need line uniqueness (L3)."),
    needs_bifurcation: bool = typer.Option(
        False, "--needs-bifurcation", help="Keep only tiles that need bifurcation (L4)."
    ),
    library: Path = LibraryOpt,
) -> None:
    """Generate tiles (random solution, seeded thinning, features) and append them to the library;
    with --stock, top up the stock where it is thin."""
    from generator.batch import append_generated, new_seed
    from generator.make import GenParams, Targets
    from tilelib.rng import seed_from_hex

    if workers < 1:
        raise BadInput(f"--workers must be at least 1, got {workers}")
    if stock:
        given = [
            k
            for k, v in (
                ("--n", n),
                ("--count", count),
                ("--seam-mask", seam_mask or None),
                ("--level", level or None),
                ("--m-max", m_max),
                ("--min-ladder", min_ladder or None),
                ("--max-ladder", None if max_ladder == LADDER_TOP else max_ladder),
                ("--needs-unique", needs_unique or None),
                ("--needs-bifurcation", needs_bifurcation or None),
            )
            if v is not None
        ]
        if given:
            raise BadInput(f"--stock plans its own sizes, counts, seam masks and levels: drop {', '.join(given)}")
        _top_up(library, nights, profile, seed_from_hex(seed) if seed is not None else new_seed(), workers)
        return
    if n is None or count is None:
        raise BadInput("--n and --count are required (or --stock)")
    params = GenParams.make(
        n,
        m_max,
        seam_mask,
        Targets(
            min_ladder=min_ladder,
            needs_unique=needs_unique,
            needs_bifurcation=needs_bifurcation,
            max_ladder=max_ladder,
            level=level,
        ),
    )
    if not 1 <= count <= MAX_COUNT:
        raise BadInput(f"--count must be in 1..{MAX_COUNT:,}, got {count} (run it again for more)")
    seed_bytes = seed_from_hex(seed) if seed is not None else new_seed()
    with progress(f"generating n={n}", total=count) as bar:
        rep = append_generated(library, params, count, seed_bytes, workers=workers, on_tile=bar.advance)
    typer.echo(
        f"generated {rep.generated:,} n={n} tiles ({params.describe()}), "
        f"{rep.inserted:,} new, {rep.duplicates:,} already in {library}; seed {rep.seed.hex()}"
    )


def _top_up(library: Path, nights: int, profile: str, seed: bytes, workers: int) -> None:
    from generator import topup
    from tilelib import stock as stock_
    from tilelib.difficulty import parse_profile
    from tilelib.store import Library

    topup.check_nights(nights)
    prof = parse_profile(profile)
    with Library.open(library) as lib:  # a missing library is exit 3: there is no stock to top up
        p = topup.plan(stock_.report(lib.conn, library), topup.misses_mix(lib.conn, stock_.NIGHTS), nights, prof)
    typer.echo(
        f"stock target {nights} night(s): "
        + ", ".join(f"n={n} {p.have[n]:,}/{p.targets[n]:,}" for n in p.targets)
        + f"; {p.count:,} tiles to make"
    )

    def done(b, new: int, cpu: float) -> None:
        level = f", level {b.level}" if b.level else ""
        typer.echo(f"  n={b.n} {b.cls} (seam mask {b.seam_mask}{level}): {new:,} new tiles, CPU {cpu:.1f} s")

    with progress("topping up the stock", total=p.count) as bar:
        rep = topup.top_up(library, p, seed, workers=workers, on_tile=bar.advance, on_batch=done)
    typer.echo(rep.line())
    assert rep.after is not None  # top_up reads the stock once it is done
    for text in stock_.lines(rep.after):
        typer.echo(f"stock {text}")
