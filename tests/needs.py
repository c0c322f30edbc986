"""The one rule for a test that needs something outside Python's standard library or the test extras
(a system package, the rl extra, a module-scoped state): ``need(why)`` skips with one line on a
developer's machine and **fails** under CI (``CI`` set and not ``0``/``false``), so CI is never green
with a test left out. ``need_module`` is ``pytest.importorskip`` under the same rule.

The suite's end says how many tests were skipped and why (``conftest.pytest_terminal_summary``); under
CI a skip that is not listed in ``ALLOWED`` (a node id prefix and its reason) fails the session.
"""

from __future__ import annotations

import importlib
import os

import pytest

# node id prefixes a CI run may skip, each with the reason it is not a hole
ALLOWED: dict[str, str] = {
    "tests/test_trim_heap.py::": "glibc's malloc_trim and /proc exist on Linux only; CI is Linux",
}


def under_ci() -> bool:
    """True on CI: the variable CI set (GitHub, GitLab and most runners set CI=true) and not false."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def need(why: str | None) -> None:
    """Nothing when ``why`` is None (what the test needs is here); else skip (locally) or fail (CI)."""
    if why is None:
        return
    if under_ci():
        pytest.fail(f"{why} (under CI a missing requirement fails; scripts/test.sh installs it)")
    pytest.skip(why, allow_module_level=True)


def need_module(name: str, why: str):
    """The module ``name``, imported; without it ``need(why)``."""
    try:
        return importlib.import_module(name)
    except ImportError:
        need(f"{why}: no module {name}")
        raise  # need() skipped or failed; never reached


def allowed(nodeid: str) -> bool:
    return any(nodeid.startswith(prefix) for prefix in ALLOWED)
