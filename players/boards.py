"""Fresh seeded boards for training and evaluation: a new day's board for every episode, built in
process by the nightly build itself (``daily.build``), so an agent learns to solve, not one board.

``Boards(size, profile, split)`` says which boards; ``BoardMaker`` makes them in a folder of its own:

- **the split's library**, made once per maker: ``WARM_UP`` boards of the size built from an empty
  library with seeds of the split's own namespace, whose misses the build's generator drains into
  new tiles. Each split has its own, so a board of ``test`` is made of tiles drawn apart from the
  tiles ``train`` boards are made of (n = 6 has only 4,140 solutions: small tiles will recur; the
  larger ones, almost never);
- **a board** for an integer seed: a copy of the split's library and one build (``reuse="any"``,
  no remote) with the 32-byte seed ``sha256("tiles-boards/<split>/<seed>")``. Everything the build
  reads is that seed, that library and the code, so the same seed gives the same board byte for
  byte, in any process (``tests/test_boards.py`` compares two interpreters).

The splits: ``train``, ``validation`` and ``test`` are seed namespaces, not lists, so each holds as
many boards as one asks for, and no seed of one is a seed of another. Distinct seeds give distinct
boards from G = 41 up (1,000 of 1,000, tested); smaller boards have few packings and repeat now and
then (G = 31: 5 repeats in 150 boards, G = 21: 1 in 60). A board builds in ~0.1–0.2 s on one core
once its split's library is made (``scripts/bench_boards.py``).
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from tilelib.errors import BadInput

SPLITS = ("train", "validation", "test")
WARM_UP = 4  # boards built into an empty library to make a split's library
DAY = "2000-01-01"  # every made board's day: a board is named by its split and seed, not its date


@dataclass(frozen=True)
class Boards:
    """Which fresh boards an environment draws: the board side ``size`` (cells), the difficulty
    ``profile`` the build aims for (``tiles daily build --profile``: a preset such as ``human``, a
    JSON table, or None for the library's own mix) and the ``split``."""

    size: int = 61
    profile: str | None = None
    split: str = "train"

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise BadInput(f"split {self.split!r}: expected one of {', '.join(SPLITS)}")
        if type(self.size) is not int or not 21 <= self.size <= 301:
            raise BadInput(f"board size {self.size!r}: fresh boards are 21..301 cells a side")

    def seed(self, k: int) -> bytes:
        """The build seed of board ``k`` of this split."""
        return hashlib.sha256(f"tiles-boards/{self.split}/{int(k)}".encode()).digest()


class BoardMaker:
    """Makes the boards of one ``Boards`` in ``folder`` (module doc): ``board(k)`` gives the manifest
    and library of board ``k``, each board in a folder of its own, the one before it removed."""

    def __init__(self, boards: Boards, folder: Path) -> None:
        self.boards, self.folder = boards, Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._library: Path | None = None
        self._last: Path | None = None

    def library(self) -> Path:
        """The split's library, made on first use (``WARM_UP`` builds from an empty library)."""
        if self._library is None:
            lib = self.folder / f"{self.boards.split}-{self.boards.size}.sqlite"
            warm = self.folder / "warm-up"
            for k in range(WARM_UP):
                self._build(
                    lib, warm, hashlib.sha256(f"tiles-boards/library/{self.boards.split}/{k}".encode()).digest()
                )
            shutil.rmtree(warm, ignore_errors=True)
            self._library = lib
        return self._library

    def board(self, k: int) -> tuple[Path, Path]:
        """(manifest, library) of board ``k``: one build over a copy of the split's library."""
        here = self.folder / f"board-{int(k)}"
        if here.exists():
            shutil.rmtree(here)
        here.mkdir()
        lib = here / "lib.sqlite"
        shutil.copyfile(self.library(), lib)
        manifest = self._build(lib, here, self.boards.seed(k))
        if self._last is not None and self._last != here:
            shutil.rmtree(self._last, ignore_errors=True)
        self._last = here
        return manifest, lib

    def _build(self, lib: Path, out: Path, seed: bytes) -> Path:
        from daily.build import build
        from daily.options import BuildOptions

        opts = BuildOptions(
            day=DAY,
            library=lib,
            out_dir=out,
            size=self.boards.size,
            seed=seed,
            force=True,
            profile=self.boards.profile,
            workers=1,
            reuse="any",
        )
        done = build(opts, log=lambda _line: None)
        assert done.manifest_path is not None  # a forced build always writes its manifest
        return done.manifest_path
