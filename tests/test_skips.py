"""No silent skips (tests/needs.py): a test that needs PostgreSQL, chromium, nginx or the rl extra
skips with one line on a developer's machine and fails under CI; the suite's end counts the skips and
says why. Shown on a real PostgreSQL test file run with PostgreSQL hidden (TILES_TEST_WITHOUT)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from needs import ALLOWED, allowed, under_ci

ROOT = Path(__file__).resolve().parent.parent
TARGET = "tests/test_gather.py"  # a small file whose tests run on PostgreSQL too


def pytest_run(ci: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"TILES_TEST_WITHOUT": "postgresql"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", TARGET, "-k", "postgresql", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_without_postgresql_a_developer_s_run_skips_and_says_how_many():
    r = pytest_run(None)
    assert r.returncode == 0, r.stdout[-2000:]
    got = re.search(r"^skipped: (\d+)$", r.stdout, re.M)
    assert got and int(got.group(1)) > 0, r.stdout[-2000:]
    assert "PostgreSQL is hidden from this run" in r.stdout


def test_without_postgresql_a_ci_run_fails_naming_the_tests():
    r = pytest_run("true")
    assert r.returncode == 1, r.stdout[-2000:]
    failed = re.findall(r"^(?:FAILED|ERROR) (tests/test_gather\.py::\S+)", r.stdout, re.M)
    assert failed and all("postgresql" in name for name in failed), r.stdout[-2000:]
    assert "under CI a missing requirement fails" in r.stdout


def test_what_counts_as_ci():
    old = os.environ.get("CI")
    try:
        for value, want in (("true", True), ("1", True), ("yes", True), ("", False), ("false", False), ("0", False)):
            os.environ["CI"] = value
            assert under_ci() is want, value
        os.environ.pop("CI")
        assert under_ci() is False
    finally:
        if old is None:
            os.environ.pop("CI", None)
        else:
            os.environ["CI"] = old


def test_every_allowed_skip_names_a_file_and_a_reason():
    for prefix, reason in ALLOWED.items():
        assert (ROOT / prefix.split("::")[0]).is_file() and len(reason) > 20, prefix
    assert allowed("tests/test_trim_heap.py::test_x") and not allowed("tests/test_gather.py::test_x")


def test_probe_a_plain_skip():
    """Skipped when TILES_TEST_PROBE_SKIP is set (the next test's subject); otherwise it checks that
    this file is not among the skips CI allows, which is why skipping it under CI must fail."""
    if os.environ.get("TILES_TEST_PROBE_SKIP"):
        import pytest

        pytest.skip("a plain skip, for the probe")
    assert not allowed("tests/test_skips.py::test_probe_a_plain_skip")


def test_an_unlisted_skip_fails_a_ci_run_and_passes_a_local_one():
    def run(ci: str | None) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "CI"} | {"TILES_TEST_PROBE_SKIP": "1"}
        env |= {"CI": ci} if ci is not None else {}
        probe = "tests/test_skips.py::test_probe_a_plain_skip"
        return subprocess.run(
            [sys.executable, "-m", "pytest", probe, "-p", "no:cacheprovider"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    ci, local = run("true"), run(None)
    assert ci.returncode == 1 and "skips not allowed under CI (exit 1): tests/test_skips.py::test_probe" in ci.stdout
    assert local.returncode == 0 and "skipped: 1" in local.stdout, local.stdout[-1000:]
