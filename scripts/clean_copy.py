"""A clean copy of the repository: what a clone holds, made from this checkout without git's history.

The files git knows (tracked, and untracked but not ignored: no ``.venv``, no ``out/``, no
``tiles.toml``), symlinks kept as symlinks (``tilelib/schema.sql``); with ``extensions`` also the built C
extensions, for a copy that runs without compiling (mutation testing). Used by
``scripts/mutation.py`` and ``tests/test_readme_commands.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def clean_copy(dest: Path, *, extensions: bool = False, root: Path = ROOT) -> Path:
    """Copy the checkout at ``root`` into ``dest`` (emptied first); return ``dest``."""
    if dest.exists():
        shutil.rmtree(dest)
    names = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, capture_output=True, check=True
    ).stdout.split(b"\0")
    for raw in names:
        name = raw.decode()
        src = root / name
        if not name or not (src.is_file() or src.is_symlink()):
            continue  # a file deleted in the work tree but not yet in git
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dest / name)
        else:
            shutil.copy2(src, dest / name)
    if extensions:
        for ext in root.glob("*/*.so"):
            shutil.copy2(ext, dest / ext.relative_to(root))
    return dest
