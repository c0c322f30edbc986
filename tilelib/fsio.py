"""Writing output files so a failure never leaves half a file behind."""

from __future__ import annotations

import os
from pathlib import Path

from tilelib.errors import BadInput


def atomic_write(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` to a temp file beside ``path`` and rename it into place.

    Text is written as UTF-8. An OS error (missing directory, no permission,
    disk full) is BadInput naming the path, and the temp file is removed.
    """
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    blob = data.encode("utf-8") if isinstance(data, str) else data
    try:
        tmp.write_bytes(blob)
        os.replace(tmp, p)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise BadInput(f"cannot write {p}: {e.strerror}") from e
    return p


def check_placeable(path: str | Path, what: str, *, want_dir: bool = False) -> Path:
    """``path`` can become a file (or, ``want_dir``, a directory): BadInput naming ``what`` when it is
    the wrong kind already or lies under a file. Nothing is created."""
    p = Path(path)
    if want_dir and p.exists() and not p.is_dir():
        raise BadInput(f"{what} {p} is a file, not a directory")
    if not want_dir and p.is_dir():
        raise BadInput(f"{what} {p} is a directory, not a file")
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise BadInput(f"{what} {p} is under {parent}, which is a file")
            break
    return p
