"""The one way the tests run the ``tiles`` command: ``run_tiles(*args)``.

It runs the real entry point, ``tiles_cli.app.main`` (the one place that maps errors to exit
codes and one-line messages), with every ``TILES_*`` and ``AWS_*`` variable of the caller's
environment removed so only what a test passes in ``env`` counts (and no ``tiles.toml``: the
project file is off unless ``env`` sets ``TILES_CONFIG``), and returns a
``subprocess.CompletedProcess`` (``returncode``, ``stdout``, ``stderr`` as text) either way:

- by default **in this process**, inside Typer's ``CliRunner`` isolation (the environment,
  stdin, stdout and stderr swapped for the call and restored after): no interpreter start-up,
  which cost 1-2 s per call;
- with ``process=True`` in a **fresh interpreter** (``python -m tiles_cli.app``), for a test that
  needs a real process: another process holding a lock, a kill, or state read at import.

``inherit=True`` keeps the caller's TILES_*/AWS_* variables, for tests whose subject is reading
them (set with ``monkeypatch.setenv``).
"""

from __future__ import annotations

import os
import subprocess
import sys

from typer.testing import CliRunner


def _ours(name: str) -> bool:
    return name.startswith(("TILES_", "AWS_"))


def run_tiles(
    *args: str,
    env: dict | None = None,
    input: str | bytes | None = None,
    process: bool = False,
    inherit: bool = False,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """``tiles ARGS…`` with a clean tiles/AWS environment (unless ``inherit``) plus ``env``; text
    output captured; ``input`` is stdin; ``timeout`` bounds a ``process=True`` run."""
    argv = [str(a) for a in args]
    # no tiles.toml from the working tree (TILES_CONFIG empty) unless the test names one, or passes
    # TILES_CONFIG=None to let the command look from its working directory upward
    env = {"TILES_CONFIG": "", **(env or {})} if not inherit else env
    if process:
        base = {k: v for k, v in os.environ.items() if inherit or not _ours(k)}
        return subprocess.run(
            [sys.executable, "-m", "tiles_cli.app", *argv],
            capture_output=True,
            text=True,
            env={k: v for k, v in dict(base, **(env or {})).items() if v is not None},
            input=input,
            timeout=timeout,
        )
    from tiles_cli.app import main

    # CliRunner sets the variables given and unsets those mapped to None.
    overrides: dict = {} if inherit else {k: None for k in os.environ if _ours(k)}
    overrides.update(env or {})
    with CliRunner().isolation(input=input, env=overrides) as (out, err, _):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(errors="replace"), err.getvalue().decode(errors="replace")
    return subprocess.CompletedProcess(["tiles", *argv], code, stdout, stderr)
