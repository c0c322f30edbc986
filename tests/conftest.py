"""Shared fixtures: a fresh library file per test, and the tests/ dir on sys.path for `support`."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))

settings.register_profile("ci", deadline=None, max_examples=60, derandomize=True)
settings.load_profile("ci")


@pytest.fixture
def lib_path(tmp_path):
    return tmp_path / "lib.sqlite"


@pytest.fixture
def lib(lib_path):
    from tilelib.store import Library

    with Library.create(lib_path) as library:
        yield library
