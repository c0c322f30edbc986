"""The options of one night's build (``tiles daily build``), declared once.

``BuildOptions`` is the one typed value a build is asked with: the CLI makes it (its options take
their defaults from these fields: ``default``), ``daily.build.plan`` checks it once and resolves it
into the frozen ``Night`` the stages read, and the stitch and its halves take the ``StitchOptions``
made there whole. Light on purpose — the standard library and the plug-in registry only — so the CLI
reads it at start-up without loading the pipeline (``tests/test_startup.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelib import plugins


@dataclass(frozen=True)
class BuildOptions:
    day: str
    library: Path
    out_dir: Path
    size: int = 1000  # the board's side G in cells
    packer: str = plugins.names(plugins.PACKER)[0]  # the registry's first packer
    params: dict | None = None
    seed: bytes | None = None  # None: derived from the secret and the day
    secret: str | None = None
    remote: str | None = None
    force: bool = False
    start: dict | None = None  # replay: record this start state {snapshot, deltas} (no remote to ask)
    profile: object = None  # difficulty profile: stitcher.profile JSON form, preset name or None
    workers: int | None = None  # processes for the stitch's halves (and verify); None: one per core, at
    #                             most 2 (stitcher.regions.default_workers); the board is the same for any
    reuse: str = "fresh"  # the fair rule (tilelib.spent.Reuse): "fresh" or "any"
    play: str = "tile-by-tile"  # referee.manifest.PLAY_RULES: clues until referee.closure covers the
    #                             board; "propagation": the frontier proof alone (replays of older days)


def default(name: str) -> Any:
    """The default of ``BuildOptions``' field ``name``: what the CLI's option of it defaults to."""
    return next(f.default for f in dataclasses.fields(BuildOptions) if f.name == name)
