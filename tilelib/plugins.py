"""The one registry of what plugs into ``tiles``: packers, remote backends and CLI command groups.

Each plug-in is a row — its kind, the name users type (a packer's ``--packer``, a remote URL's
scheme, the CLI's first word) and the module that implements it — and every plug-in of every kind
is found and loaded the same way, through ``names`` and ``load``. The module declares what it is:

- a **packer** (``packers``): ``NAME`` (its row's name), ``VERSION``, ``DEFAULTS``, ``ORDER`` (the
  stitcher's placement order), ``check_params`` and ``pack``;
- a **remote** (``remote``): ``BACKEND``, the ``remote.backend.Backend`` class for its schemes;
- a **command group** (``tiles_cli``): ``register(app)``, which adds its commands to the CLI.

Why a table of module names rather than discovery: it lives at the lowest layer and imports nothing,
so the CLI can list the packers and pick the modules of one command without loading numpy, boto3
or another group (``tests/test_startup.py``); entry points cost ~30 ms of every start and need a
reinstall to see a new module, and scanning the packages imports every module to read its name
(DECISIONS 0048). ``tests/test_plugins.py`` holds each module to its row (a packer's ``NAME``, a
backend's schemes, a group's commands), and FORMAT's packer table to the packer rows.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from tilelib.errors import BadInput


@dataclass(frozen=True)
class Plugin:
    kind: str  # "packer" | "remote" | "command"
    name: str  # what users type: the packer, the URL scheme, the CLI's first word
    module: str  # the module that implements it, imported on first use


PACKER, REMOTE, COMMAND = "packer", "remote", "command"

# In each kind's order of listing: packers as ``--packer`` lists them (the default first), command
# groups as ``tiles --help`` does.
PLUGINS = (
    Plugin(PACKER, "big-first", "packers.big_first"),
    Plugin(PACKER, "grown", "packers.grown"),
    Plugin(PACKER, "bands", "packers.bands"),
    Plugin(PACKER, "substitution", "packers.substitution"),
    Plugin(PACKER, "islands", "packers.islands"),
    Plugin(REMOTE, "s3", "remote.s3"),
    Plugin(REMOTE, "file", "remote.local"),
    Plugin(REMOTE, "http", "remote.http"),
    Plugin(REMOTE, "https", "remote.http"),
    Plugin(COMMAND, "library", "tiles_cli.library"),
    Plugin(COMMAND, "library", "tiles_cli.library_sync"),
    Plugin(COMMAND, "library", "tiles_cli.library_generate"),
    Plugin(COMMAND, "library", "tiles_cli.library_misses"),
    Plugin(COMMAND, "pack", "tiles_cli.pack"),
    Plugin(COMMAND, "referee", "tiles_cli.referee"),
    Plugin(COMMAND, "referee", "tiles_cli.referee_play"),
    Plugin(COMMAND, "daily", "tiles_cli.daily"),
    Plugin(COMMAND, "solve", "tiles_cli.solve"),
    Plugin(COMMAND, "play", "tiles_cli.play"),
    Plugin(COMMAND, "config", "tiles_cli.config"),
    Plugin(COMMAND, "init", "tiles_cli.init"),
)
KINDS = {PACKER: "packer", REMOTE: "remote URL scheme", COMMAND: "command"}


def names(kind: str) -> tuple[str, ...]:
    """The names of ``kind``'s plug-ins, in the table's order, each once."""
    return tuple(dict.fromkeys(p.name for p in PLUGINS if p.kind == kind))


def modules(kind: str, name: str | None = None) -> tuple[str, ...]:
    """The modules of ``kind``'s plug-ins (of the one called ``name``), in the table's order, each once;
    BadInput for a name the table does not hold."""
    found = tuple(dict.fromkeys(p.module for p in PLUGINS if p.kind == kind and name in (None, p.name)))
    if not found:
        raise BadInput(f"unknown {KINDS[kind]} {name!r} (known: {', '.join(names(kind))})")
    return found


def load(kind: str, name: str) -> ModuleType:
    """The module of the plug-in ``name`` of ``kind``, imported (BadInput if there is none; a kind
    whose plug-in spans several modules, as a command group may, gives its first)."""
    return importlib.import_module(modules(kind, name)[0])
