"""The one way the trust tests run the real ``tiles`` entry point: a subprocess (exit codes, stderr and
a fresh interpreter are part of what they check), with every ``TILES_*`` and ``AWS_*`` variable of the
caller's environment removed so only what a test passes counts."""

from __future__ import annotations

import os
import subprocess
import sys


def run_tiles(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``tiles ARGS…`` with a clean tiles/AWS environment plus ``env``; text output captured."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("TILES_", "AWS_"))}
    return subprocess.run([sys.executable, "-m", "tiles_cli.app", *args], capture_output=True, text=True,
                          env=dict(base, **(env or {})), timeout=timeout)
