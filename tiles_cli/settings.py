"""The project's settings: one table of what a working folder can set, and where each value comes from.

A value comes from the command line, else the environment, else the project file ``tiles.toml`` (the
nearest one from the working directory upward, or the file ``TILES_CONFIG`` names; ``TILES_CONFIG=``
empty means none), else the default. Each setting is one row of ``SETTINGS``: its key in the file, its
environment variable (also the ``envvar`` of every option that takes it) and its default. The file's
values reach Click as a ``default_map``, which Click consults after the command line and the
environment: the order above is Click's own. ``tiles init`` writes the file; ``tiles config`` says
which value came from where.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilelib.errors import BadInput

FILE = "tiles.toml"
CONFIG_ENV = "TILES_CONFIG"


@dataclass(frozen=True)
class Setting:
    """One setting: ``key`` in tiles.toml, ``env`` its variable, ``kind`` how a file value is read
    ("path": relative to the file's folder; "url": as written; "runs": a URL as written, else a path)."""

    key: str
    env: str
    kind: str
    default: str | None
    help: str

    @property
    def metavar(self) -> str:
        """How ``--help`` names the value."""
        return {"path": "PATH", "url": "URL"}.get(self.kind, "FILE|URL")


SETTINGS: tuple[Setting, ...] = (
    Setting("library", "TILES_LIBRARY", "path", "tiles.sqlite", "the tile library file"),
    Setting("remote", "TILES_REMOTE", "url", None, "the library's remote: s3://bucket/prefix or file:///dir"),
    Setting("public_remote", "TILES_PUBLIC_REMOTE", "url", None, "the public mirror finished days go to"),
    Setting("runs", "TILES_RUNS", "runs", "tiles-runs.sqlite", "the runs database: a SQLite file or postgresql://"),
    Setting("out", "TILES_OUT", "path", ".", "the folder `tiles daily build` writes DAY.json to"),
    Setting("secret_file", "TILES_SECRET_FILE", "path", None, "a file holding the daily seed's key"),
)


def environment() -> tuple[tuple[str, str], ...]:
    """The variables read outside any option (no tiles.toml key): the seed's key stays out of files
    that name it in place, the S3 endpoint goes with the credentials boto3 reads, TILES_CONFIG picks
    the file. (A function: ``daily.seed`` loads only when asked, not on every command's start-up.)"""
    from daily.seed import SECRET_ENV
    from remote.head import HOST_ENV

    return (
        (
            SECRET_ENV,
            "the daily seed's key (HMAC-SHA256, FORMAT §9), or a keyring of dated keys; wins over a secret file "
            "from env or tiles.toml",
        ),
        (
            HOST_ENV,
            "this host's name in the nightly log, its metrics and HEAD's pushed_by (default: the machine's)",
        ),
        ("TILES_S3_ENDPOINT", "the S3 endpoint of s3:// remotes (R2: https://<account>.r2.cloudflarestorage.com)"),
        ("AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY", "the S3 credentials, read by boto3 as it always does"),
        (
            "TILES_S3_PART_MB",
            "MiB of a multipart upload's part and the size from which a snapshot goes up in parts (5..5120; 8)",
        ),
        (CONFIG_ENV, "the project file to read instead of the nearest tiles.toml; empty: none"),
    )


BY_KEY = {s.key: s for s in SETTINGS}
BY_ENV = {s.env: s for s in SETTINGS}


def setting(key: str) -> Setting:
    """The row of ``key`` (KeyError on a name no option may use)."""
    return BY_KEY[key]


def option_help(key: str, text: str) -> str:
    """An option's help, naming its environment variable and file key (the one wording)."""
    return f"{text} (env {BY_KEY[key].env}; `{key}` in {FILE})."


@dataclass(frozen=True)
class Project:
    """The project file read: its path (None when there is none) and its values, paths made absolute."""

    path: Path | None = None
    values: Mapping[str, str] = field(default_factory=dict)

    def value(self, key: str, environ: Mapping[str, str]) -> tuple[str | None, str]:
        """The value of ``key`` without the command line, and where it came from."""
        s = BY_KEY[key]
        if environ.get(s.env):
            return environ[s.env], f"environment {s.env}"
        if key in self.values:
            return self.values[key], f"file {self.path}"
        return s.default, "default"


def find(start: Path) -> Path | None:
    """The nearest tiles.toml from ``start`` upward (a symlink to a file counts, as git's config does)."""
    for folder in (start, *start.parents):
        candidate = folder / FILE
        if candidate.is_file():
            return candidate
    return None


def load(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Project:
    """Read the project file (``TILES_CONFIG``'s, else the nearest); BadInput on one that is not ours."""
    environ = os.environ if environ is None else environ
    named = environ.get(CONFIG_ENV)
    if named == "":
        return Project()
    if named is not None and not Path(named).is_file():
        raise BadInput(f"{CONFIG_ENV} names {named}, which is not a file")
    path = Path(named) if named is not None else find((cwd or Path.cwd()).absolute())
    if path is None:
        return Project()
    return Project(path, parse(path.read_bytes(), path))


def parse(data: bytes, path: Path) -> dict[str, str]:
    """The settings in a tiles.toml's bytes, paths made absolute against the file's folder."""
    return {key: _absolute(BY_KEY[key], value, path.parent) for key, value in read(data, path).items()}


def read(data: bytes, path: Path) -> dict[str, str]:
    """The settings in a tiles.toml's bytes as written: known keys, non-empty strings. BadInput (one
    line, naming the file) on anything else."""
    import tomllib  # here, not at start-up: most commands run where no tiles.toml is

    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise BadInput(f"{path}: not a TOML file ({err})") from err
    for key, value in table.items():
        if key not in BY_KEY:
            raise BadInput(f"{path}: unknown setting {key!r} (known: {', '.join(BY_KEY)})")
        if not isinstance(value, str) or not value or "\x00" in value:
            raise BadInput(f"{path}: {key} must be a non-empty string")
    return table


def _absolute(s: Setting, value: str, folder: Path) -> str:
    """A file's value as the options take it: a relative path joined to the file's folder."""
    if s.kind == "url" or (s.kind == "runs" and "://" in value):
        return value
    return str(folder / Path(value).expanduser())


def render(values: Mapping[str, str]) -> str:
    """tiles.toml's text for ``values`` (in SETTINGS' order): one ``key = "value"`` line each."""
    lines = [f"# {FILE}: this folder's settings for `tiles` (`tiles config` shows them and their sources)"]
    lines += [f"{s.key} = {_basic_string(values[s.key])}" for s in SETTINGS if s.key in values]
    return "\n".join(lines) + "\n"


def _basic_string(text: str) -> str:
    """``text`` as a TOML basic string: quote and backslash escaped, control characters as \\uXXXX,
    every other character as itself (TOML's escapes take Unicode scalars only, never a surrogate pair)."""
    out = (f"\\u{ord(c):04X}" if ord(c) < 0x20 or ord(c) == 0x7F else "\\" + c if c in '"\\' else c for c in text)
    return '"' + "".join(out) + '"'


def default_map(command: Any, project: Project) -> dict[str, Any]:
    """Click's ``default_map`` for ``command``'s tree: every option whose envvar is a setting's takes
    the file's value, below the command line and the environment (Click's order)."""
    found: dict[str, Any] = {}
    if not project.values:
        return found
    for param in getattr(command, "params", ()):
        s = BY_ENV.get(param.envvar) if isinstance(param.envvar, str) else None
        if s is not None and s.key in project.values and param.name:
            found[param.name] = project.values[s.key]
    for name, sub in getattr(command, "commands", {}).items():
        inner = default_map(sub, project)
        if inner:
            found[name] = inner
    return found


def secret(secret_file: Path | None, from_command_line: bool, environ: Mapping[str, str] | None = None) -> str | None:
    """The daily seed's key: ``--secret-file`` given on the command line, else ``TILES_SECRET``, else
    the secret file from the environment or tiles.toml; None when none is set. The file's text is the
    key, one trailing newline dropped; BadInput when it cannot be read or is empty."""
    from daily.seed import SECRET_ENV

    environ = os.environ if environ is None else environ
    if not from_command_line and environ.get(SECRET_ENV):
        return environ[SECRET_ENV]
    if secret_file is None:
        return None
    try:
        text = secret_file.read_text("utf-8").removesuffix("\n")
    except (OSError, UnicodeDecodeError) as err:
        raise BadInput(f"cannot read the secret file {secret_file}: {getattr(err, 'strerror', None) or err}") from err
    if not text:
        raise BadInput(f"the secret file {secret_file} is empty")
    return text


def report(project: Project, environ: Mapping[str, str] | None = None) -> Iterator[tuple[str, str, str]]:
    """(key, value, source) of every setting, the secret's presence (never its value) last."""
    from daily.seed import SECRET_ENV

    environ = os.environ if environ is None else environ
    for s in SETTINGS:
        value, source = project.value(s.key, environ)
        yield s.key, "-" if value is None else value, source
    if environ.get(SECRET_ENV):
        yield "secret", "(set)", f"environment {SECRET_ENV}"
    else:
        path, source = project.value("secret_file", environ)
        yield "secret", "(not set)" if path is None else "(from secret_file)", source
