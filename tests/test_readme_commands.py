"""The README as a newcomer types it: a clean copy of the repository, the quickstart, then every line
of "The commands used most" exactly as printed there, from the copy's root, each exit 0. The serve
line is started, waited for and stopped with Ctrl-C (SIGINT), as a person in a terminal would."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from clean_copy import clean_copy  # noqa: E402  (scripts/clean_copy.py: what a clone holds)

SECTION = "## The commands used most"


def readme_lines(text: str) -> list[str]:
    """The commands of the section's first sh block, each without its trailing comment."""
    body = text.split(SECTION, 1)[1]
    block = re.search(r"```sh\n(.*?)```", body, re.S)
    assert block, "no sh block under the section"
    lines = [re.sub(r"\s+#.*$", "", line).strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line]


def a_newcomer_s_environment(home: Path) -> dict[str, str]:
    """No TILES_/AWS_ variables and no virtualenv on the PATH: a fresh shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TILES_", "AWS_", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    env["HOME"] = env.get("HOME", str(home))
    return env


def test_the_readme_lines_are_what_this_test_runs():
    """The parser reads the block a person reads: activation first, the serve and play lines present."""
    lines = readme_lines((ROOT / "README.md").read_text("utf-8"))
    assert lines[0] == ". .venv/bin/activate"
    assert any(line.startswith("tiles referee serve") for line in lines)
    assert any(line.startswith("tiles play") for line in lines)
    assert all(not line.startswith(".venv/") for line in lines[1:])  # typed as `tiles …`, after activation


def _wait_ready(url: str, proc: subprocess.Popen, log: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"serve exited {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"serve not ready: {log.read_text()[-2000:]}")


@pytest.mark.slow
def test_after_the_quickstart_every_readme_command_runs_as_typed(tmp_path):
    repo = clean_copy(tmp_path / "tiles")
    env = a_newcomer_s_environment(tmp_path)
    qs = subprocess.run(["bash", "scripts/quickstart.sh"], cwd=repo, env=env, capture_output=True, text=True)
    assert qs.returncode == 0, qs.stderr[-3000:]
    lines = readme_lines((repo / "README.md").read_text("utf-8"))
    activate, commands = lines[0], lines[1:]
    serve = None
    try:
        for line in commands:
            shell = f"{activate} && {line}"
            if line.startswith("tiles referee serve"):
                log = tmp_path / "serve.log"
                with log.open("w") as out:  # its own process group: Ctrl-C reaches it, not this test
                    serve = subprocess.Popen(
                        ["bash", "-c", f"{activate} && exec {line}"],
                        cwd=repo,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                _wait_ready("http://127.0.0.1:8000/readyz", serve, log)
                continue
            r = subprocess.run(["bash", "-c", shell], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
            assert r.returncode == 0, f"{line!r} exited {r.returncode}: {r.stderr[-3000:]}"
            if line.startswith("tiles play"):
                assert '"reward"' in r.stdout, r.stdout
        assert serve is not None, "the README starts no service"
        os.killpg(serve.pid, signal.SIGINT)
        assert serve.wait(timeout=60) == 0, (tmp_path / "serve.log").read_text()[-2000:]
    finally:
        if serve is not None and serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait()
