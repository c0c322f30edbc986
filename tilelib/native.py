"""The one rule for the C twins: load an extension, and say so loudly when it is missing or stale.

Three C extensions twin Python code (``engine._kernel``, ``tilelib._sym``, ``stitcher._core``);
every site that uses one gets it from ``load_twin(name)``:

- built and current: the module;
- **missing** (never built, or it fails to import): ``None``, after one single-line
  ``TwinWarning`` on stderr; the site then runs its Python reference (same results, several
  times slower) or, where there is none (the engine's kernels), fails with ``NotBuilt`` when
  called (``require_twin``);
- **stale** (built from other C sources than the ones beside it, e.g. a ``.c`` edited without
  re-running ``pip install -e .``): the module, after one single-line ``TwinWarning``.

Staleness: ``setup.py`` compiles each extension with ``SOURCE_DIGEST`` = ``source_digest`` of its
sources and headers (their names in ``SOURCES``), and the module exports both; here the digest
is recomputed from the files if they are present (an installed wheel without its ``.c`` files is
not checked). A module built before digests existed has no ``SOURCE_DIGEST``: stale.

Each twin warns at most once per process. The warning goes through ``warnings`` (so
``-W error::tilelib.native.TwinWarning`` turns it into an error, and tests can catch it) with a
pseudo file name, so Python prints it on one line without a source line.

This module imports only the standard library: ``setup.py`` runs it to compute the digests.
"""

from __future__ import annotations

import hashlib
import importlib
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the directory holding the packages
REBUILD = "rebuild with `pip install -e .`"

_warned: set[str] = set()


class TwinWarning(RuntimeWarning):
    """A C twin is missing or stale: results are the same, speed (or currency) is not."""


def source_digest(root: Path | str, files: list[str]) -> str:
    """SHA-256 over the files (paths relative to ``root``, in this order): name, length, bytes."""
    h = hashlib.sha256()
    for name in files:
        data = (Path(root) / name).read_bytes()
        h.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def _warn_once(name: str, text: str) -> None:
    if name in _warned:
        return
    _warned.add(name)
    # A pseudo file name that linecache cannot read keeps the printed warning on one line.
    warnings.warn_explicit(f"tiles: C extension {name} {text}", TwinWarning, f"<{name}>", 0, module=name)


def stale_reason(mod, root: Path = ROOT) -> str | None:
    """Why the built module does not match the C sources under ``root``, or None (current, or no
    sources there to compare with)."""
    digest, sources = getattr(mod, "SOURCE_DIGEST", None), getattr(mod, "SOURCES", None)
    if not digest or not sources:
        return "was built before source digests (an old build)"
    files = sources.split(",")
    if not all((root / f).is_file() for f in files):
        return None  # an installed copy without its sources: nothing to compare
    if source_digest(root, files) != digest:
        return f"was built from other sources than {', '.join(files)}"
    return None


def load_twin(name: str, fallback: str = "the Python reference runs instead, several times slower"):
    """The extension module ``name`` (dotted), or None if it cannot be imported; warns once per
    process when it is missing (saying ``fallback``: what runs instead) or stale."""
    try:
        mod = importlib.import_module(name)
    except ImportError as err:
        _warn_once(name, f"is not built ({err}): {fallback}; {REBUILD}")
        return None
    why = stale_reason(mod)
    if why:
        _warn_once(name, f"{why}: it may not match the Python code; {REBUILD}")
    return mod


def require_twin(mod, name: str):
    """``mod`` itself, or ``NotBuilt`` when a call needs the extension and it is missing."""
    if mod is None:
        from tilelib.errors import NotBuilt

        raise NotBuilt(f"C extension {name} is not built; {REBUILD}")
    return mod
