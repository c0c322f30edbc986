"""The project's settings (``tiles_cli.settings``): tiles.toml found from the working directory upward,
written by ``tiles init``, below the environment and the command line; ``tiles config`` says which
value came from where. Each test runs the real ``tiles`` entry point."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from pathlib import Path

import pytest
from cli_support import run_tiles
from hypothesis import given
from hypothesis import strategies as st

from tiles_cli import settings
from tiles_cli.app import build_app

FIND = {"TILES_CONFIG": None}  # unset: the command looks for tiles.toml from its working directory up


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with tiles.toml naming a library and a runs file in ./data, the cwd set to a sub-folder."""
    (tmp_path / settings.FILE).write_text('library = "data/lib.sqlite"\nruns = "data/runs.sqlite"\n')
    (tmp_path / "data").mkdir()
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    return tmp_path


def config(env=None) -> dict:
    r = run_tiles("config", "--json", env={**FIND, **(env or {})})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_nearest_file_above_the_working_directory_is_read_and_its_paths_are_its_folder_s(project):
    doc = config()
    assert doc["file"] == str(project / settings.FILE)
    assert doc["library"] == {"value": str(project / "data/lib.sqlite"), "source": f"file {project / 'tiles.toml'}"}
    assert doc["remote"] == {"value": "-", "source": "default"}
    assert doc["out"] == {"value": ".", "source": "default"}


def test_flag_beats_environment_beats_file_beats_default(project, tmp_path_factory):
    """The order, shown by where `tiles library init` puts the library each time."""
    env_lib = tmp_path_factory.mktemp("env") / "env.sqlite"
    flag_lib = tmp_path_factory.mktemp("flag") / "flag.sqlite"
    assert run_tiles("library", "init", env=FIND).returncode == 0
    assert (project / "data/lib.sqlite").is_file()
    assert run_tiles("library", "init", env={**FIND, "TILES_LIBRARY": str(env_lib)}).returncode == 0
    assert env_lib.is_file()
    assert config({"TILES_LIBRARY": str(env_lib)})["library"]["source"] == "environment TILES_LIBRARY"
    r = run_tiles("library", "init", "-L", str(flag_lib), env={**FIND, "TILES_LIBRARY": str(env_lib)})
    assert r.returncode == 0 and flag_lib.is_file()
    (project / settings.FILE).unlink()
    assert config()["library"] == {"value": "tiles.sqlite", "source": "default"}


def test_a_required_option_is_satisfied_by_the_file(project):
    """`referee score` requires --runs: the file's value is enough, and it is the file's runs file it reads."""
    r = run_tiles("referee", "score", env=FIND)
    assert r.returncode != 0 and "data/runs.sqlite" in r.stderr, r.stderr  # no such runs file yet: named
    assert "Missing option" not in r.stderr


def test_tiles_config_names_a_file_or_turns_the_file_off(project, tmp_path_factory):
    other = tmp_path_factory.mktemp("other") / "elsewhere.toml"
    other.write_text('out = "days"\n')
    assert config({"TILES_CONFIG": str(other)})["out"]["value"] == str(other.parent / "days")
    assert config({"TILES_CONFIG": ""})["file"] is None
    r = run_tiles("config", env={"TILES_CONFIG": str(other.parent / "missing.toml")})
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "missing.toml" in r.stderr


@pytest.mark.parametrize(
    "text, says",
    [
        ('librari = "x"\n', "unknown setting 'librari'"),
        ("library = 3\n", "library must be a non-empty string"),
        ('library = ""\n', "library must be a non-empty string"),
        ("[library]\npath = 'x'\n", "library must be a non-empty string"),
        ('library = "x\n', "not a TOML file"),
        (b'library = "\xff"\n', "not a TOML file"),
    ],
)
def test_a_file_that_is_not_ours_is_one_line_and_exit_2_for_every_command(project, text, says):
    path = project / settings.FILE
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    for argv in (["config"], ["library", "init"], ["referee", "score"]):
        r = run_tiles(*argv, env=FIND)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and says in r.stderr, (argv, r.stderr)
    assert not (project / "data" / "lib.sqlite").exists()


def test_init_writes_merges_makes_the_secret_and_the_remote_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    remote = (tmp_path / "rem").as_uri()
    r = run_tiles("init", "--library", "out/lib.sqlite", "--remote", remote, "--secret-file", "out/key", env=FIND)
    assert r.returncode == 0, r.stderr
    key = tmp_path / "out/key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_text().strip()) == 64
    assert (tmp_path / "rem").is_dir()
    first = key.read_text()
    r = run_tiles("init", "--out", "days", "--secret-file", "out/key", env=FIND)
    assert r.returncode == 0 and r.stdout.startswith("updated")
    assert key.read_text() == first  # an existing secret is never replaced
    assert settings.read((tmp_path / "tiles.toml").read_bytes(), tmp_path) == {
        "library": "out/lib.sqlite",
        "remote": remote,
        "out": "days",
        "secret_file": "out/key",
    }


@pytest.mark.parametrize("bad", ["s3://", "http://example.com/x", "file://relative/dir", "ftp://x/y"])
def test_init_refuses_a_remote_it_could_not_use_and_writes_nothing(tmp_path, monkeypatch, bad):
    monkeypatch.chdir(tmp_path)
    r = run_tiles("init", "--remote", bad, "--secret-file", "key", env=FIND)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert sorted(os.listdir(tmp_path)) == []


def _seed(secret: str, day: str) -> str:
    return hmac.new(secret.encode(), f"tiles-daily:{day}".encode(), hashlib.sha256).hexdigest()


def test_the_secret_comes_from_the_flag_then_the_environment_then_the_file(project):
    (project / "k1").write_text("from-the-file\n")
    (project / "k2").write_text("from-the-flag")
    with (project / settings.FILE).open("a") as fh:
        fh.write('secret_file = "k1"\n')
    day = "2020-01-01"
    reveal = ("daily", "reveal", "--date", day)
    assert run_tiles(*reveal, env=FIND).stdout.strip() == _seed("from-the-file", day)
    assert run_tiles(*reveal, env={**FIND, "TILES_SECRET": "from-env"}).stdout.strip() == _seed("from-env", day)
    r = run_tiles(*reveal, "--secret-file", str(project / "k2"), env={**FIND, "TILES_SECRET": "from-env"})
    assert r.stdout.strip() == _seed("from-the-flag", day)
    (project / "k1").write_text("")
    r = run_tiles(*reveal, env=FIND)
    assert r.returncode == 2 and "is empty" in r.stderr
    (project / "k1").unlink()
    r = run_tiles(*reveal, env=FIND)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "cannot read the secret file" in r.stderr


@given(
    st.dictionaries(
        st.sampled_from([s.key for s in settings.SETTINGS]),
        st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), min_size=1),
    )
)
def test_what_init_renders_reads_back_as_given(values):
    """Fuzz the one normaliser: any non-empty text without NUL survives tiles.toml's quoting."""
    assert settings.read(settings.render(values).encode("utf-8"), Path("t.toml")) == values


def _options(command, path=()):
    for param in getattr(command, "params", ()):
        yield path, param
    for name, sub in getattr(command, "commands", {}).items():
        yield from _options(sub, (*path, name))


def test_every_setting_is_taken_by_an_option_and_every_option_on_a_settings_variable_is_one():
    """Declared means used: each row of SETTINGS reaches at least one command's option, and an option
    whose envvar is a TILES_ variable of the project's is that setting's (the file reaches it)."""
    import typer

    command = typer.main.get_command(build_app())
    used = {p.envvar for _, p in _options(command) if isinstance(p.envvar, str)}
    assert {s.env for s in settings.SETTINGS} <= used
    extra = {e for e in used if e.startswith("TILES_")} - {s.env for s in settings.SETTINGS}
    assert extra == {"TILES_TOKEN"}  # a run's token: per run, never a folder's setting
    init = command.commands["init"]
    assert {p.name for p in init.params} == {s.key for s in settings.SETTINGS}
