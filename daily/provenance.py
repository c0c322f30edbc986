"""Where a board came from (FORMAT §13): the remote state its build started from (a base snapshot
and the deltas on top of it) and the versions that decide its output, recorded in the manifest's ``build`` key so
anyone can replay the build.

A board is a pure function of (seed, start snapshot, code); the code is named by the versions of
the parts whose output it fixes: this package, the generator (``GENERATOR_VERSION``), OR-tools
(CP-SAT's search is reproducible for one version, one worker and a fixed seed) and the Python
minor version. A replay with other versions is refused as impossible, not reported as a mismatch.
"""

from __future__ import annotations

import platform
from importlib import metadata

# pyproject.toml's [project] name ("tiles" is taken on PyPI; the command is still `tiles`).
# tests/test_trust_build.py keeps the two equal. Recorded in build.versions under the key "tiles".
DISTRIBUTION = "tiles-takuzu"


def versions() -> dict[str, str | int]:
    """The versions a replay must match, as recorded in ``build.versions``."""
    from generator.version import GENERATOR_VERSION

    def dist(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "unknown"

    return {
        "tiles": dist(DISTRIBUTION),
        "generator": GENERATOR_VERSION,
        "ortools": dist("ortools"),
        "python": ".".join(platform.python_version_tuple()[:2]),
    }


def build_record(start: dict | None) -> dict:
    """The manifest's ``build`` value for a build that started from ``start`` = {"snapshot": base sha,
    "deltas": [sha, …]} (None: no remote, so nothing to replay from)."""
    start = start or {"snapshot": None, "deltas": []}
    return {"snapshot": start["snapshot"], "deltas": list(start.get("deltas", [])), "versions": versions()}


def version_mismatch(recorded: dict) -> str | None:
    """Why this machine cannot replay a build with ``recorded`` versions, or None."""
    here = versions()
    diff = [f"{k} {recorded.get(k)!r} (here {here[k]!r})" for k in here if recorded.get(k) != here[k]]
    return ", ".join(diff) or None
