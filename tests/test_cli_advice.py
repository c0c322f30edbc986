"""Errors whose advice works: every message that names a `tiles …` command to run is followed, in the
state that produced it, and following it gives exit 0; the first command then succeeds or stops at a
different, later step. The advice found in the code is checked against the cases here, so a new piece
of advice without a case fails."""

from __future__ import annotations

import ast
import re
import shlex
import sqlite3
from pathlib import Path

import pytest
from cli_support import run_tiles

ROOT = Path(__file__).resolve().parent.parent
FIND = {"TILES_CONFIG": None}  # the command reads the tiles.toml of its working directory, as a user's does
SEED = "5eed" * 16
DAY = "2026-01-02"


class Placeholders:
    """What a person types for the advice's placeholders: URL (which one depends on the option), FILE."""

    def __init__(self, remote: str, public: str, key: Path):
        self.by_option = {"--remote": remote, "--public-remote": public, "--secret-file": str(key)}

    def fill(self, words: list[str]) -> list[str]:
        return [self.by_option.get(words[i - 1], w) if w in ("URL", "FILE") else w for i, w in enumerate(words)]


def follow(argv: list[str], fill: Placeholders, trail: list[str], depth: int = 0) -> None:
    """Run ``argv``; while it fails, take the first `tiles …` its message names, follow that (the same
    way, recursively) and run ``argv`` again: each failure must be new (no loop), each advice end in 0."""
    assert depth < 4, trail
    for _ in range(6):
        r = run_tiles(*argv, env=FIND)
        if r.returncode == 0:
            return
        message = r.stderr.strip()
        assert r.returncode != 1 and message.count("\n") == 0, (argv, r.returncode, r.stderr)
        assert message not in trail, f"following the advice led back to: {message}"
        trail.append(message)
        advice = re.findall(r"`(tiles [^`]+)`", message)
        assert advice, f"{shlex.join(argv)} stopped with no command to follow: {message}"
        follow(fill.fill(shlex.split(advice[0])[1:]), fill, trail, depth + 1)
    pytest.fail(f"no end: {trail}")


@pytest.fixture
def published(tmp_path, monkeypatch):
    """A day built elsewhere and pushed to a directory remote; the test's working folder is empty."""
    remote = tmp_path / "remote"
    remote.mkdir()
    out = tmp_path / "elsewhere"
    args = ("daily", "build", "--date", DAY, "--size", "31", "--seed", SEED, "--out", str(out))
    r = run_tiles(*args, "-L", str(out / "lib.sqlite"), "--remote", remote.as_uri())
    assert r.returncode == 0, r.stderr
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return Placeholders(remote.as_uri(), (tmp_path / "mirror").as_uri(), work / "key"), out / f"{DAY}.json"


def test_verify_in_an_empty_folder_ends_verified_by_following_each_message(published):
    """The newcomer's chain: no library -> `tiles library init`; out of date -> `tiles library pull`;
    no remote -> `tiles init --remote URL`; then the pull, then the verify, pass."""
    fill, manifest = published
    trail: list[str] = []
    follow(["referee", "verify", str(manifest)], fill, trail)
    starts = (
        "tiles: error: no tile library at ",
        "tiles: error: step tiles: tile 0: the library ",
        "tiles: error: no remote given ",
    )
    assert len(trail) == 3 and all(m.startswith(s) for m, s in zip(trail, starts, strict=True)), trail
    assert "tiles: error: tiles:" not in " ".join(trail)


def test_a_build_without_a_key_ends_built_by_following_its_message(published):
    fill, _ = published
    trail: list[str] = []
    follow(["daily", "build", "--date", DAY, "--size", "31", "--out", "."], fill, trail)
    assert len(trail) == 1 and "tiles init --secret-file FILE" in trail[0]
    assert (Path.cwd() / "key").stat().st_mode & 0o077 == 0 and (Path.cwd() / f"{DAY}.json").is_file()


def test_publishing_without_a_mirror_ends_published_by_following_its_message(published):
    fill, manifest = published
    lib = manifest.parent / "lib.sqlite"
    trail: list[str] = []
    follow(["daily", "publish-bundle", "--date", DAY, "-L", str(lib), "--force"], fill, trail)
    assert len(trail) == 1 and "tiles init --public-remote URL" in trail[0]
    assert any((Path(fill.by_option["--public-remote"][len("file://") :])).rglob("*.json"))


def test_a_refused_schema_s_advice_writes_a_clean_copy_that_opens(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_tiles("library", "init", env=FIND).returncode == 0
    with sqlite3.connect(tmp_path / "tiles.sqlite") as db:
        db.execute("CREATE INDEX extra ON tiles(n)")
    db.close()
    r = run_tiles("library", "stats", env=FIND)
    assert r.returncode == 3 and "`tiles library repair`" in r.stderr, r.stderr
    fixed = run_tiles("library", "repair", env=FIND)  # exactly what the message names
    assert fixed.returncode == 0, fixed.stderr
    assert run_tiles("library", "stats", "-L", "tiles.repaired.sqlite", env=FIND).returncode == 0


# Every `tiles …` named in a string of the shipped code: the advice followed above, or text that names
# a command without asking anyone to run it (with why).
FOLLOWED = {"tiles library init", "tiles library pull", "tiles init --remote URL", "tiles init --secret-file FILE"}
FOLLOWED |= {"tiles init --public-remote URL", "tiles library repair"}
NOT_ADVICE = {
    "tiles referee judge": "says which command made a run that has no token",
    "tiles solve": "names the format a puzzle string is in",
    "tiles daily build": "a setting's help: which command writes to the folder",
    "tiles": "the program's name in tiles.toml's header line",
    "tiles config": "tiles.toml's header line: where to see the settings",
}


def _strings(tree: ast.AST):
    """The string constants of a module that are not docstrings (f-strings' literal parts included)."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.value


def test_every_command_the_code_names_in_a_message_is_followed_by_a_test():
    named: set[str] = set()
    for package in "tilelib engine generator packers stitcher referee remote players daily tiles_cli".split():
        for path in (ROOT / package).rglob("*.py"):
            for text in _strings(ast.parse(path.read_text("utf-8"))):
                named |= set(re.findall(r"`(tiles(?: [^`]*)?)`", text))
    assert "tiles library pull" in named and "tiles init --remote URL" in named
    assert named - FOLLOWED - set(NOT_ADVICE) == set()
