"""Write docs/commands.md from the CLI itself: every command, argument and option (its default, its
environment variable and tiles.toml key), the environment and the exit codes.

    .venv/bin/python scripts/make_commands_doc.py           # rewrite docs/commands.md
    .venv/bin/python scripts/make_commands_doc.py --check   # exit 1 when docs/commands.md is stale

The text comes from the Click tree Typer builds (``tiles_cli.app``), from ``tiles_cli.settings``
(the settings and the variables read outside options) and from ``tilelib.errors.EXIT_CODES``; nothing
in the page is typed twice. ``tests/test_commands_doc.py`` runs ``--check``.
"""

from __future__ import annotations

import argparse
import enum
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "commands.md"

HEADER = """# Commands, settings, environment, exit codes

<!-- Made by scripts/make_commands_doc.py from the CLI itself; edit the code, then run it. -->

Every command of `tiles`, as `tiles COMMAND --help` says it. A value comes from the command line,
else the environment, else the project file `tiles.toml` (the nearest one from the working directory
upward: `tiles init` writes it, `tiles config` shows where each value came from), else the default.
Bad input prints one line and writes nothing.
"""


def command_tree():
    """The Click command Typer builds from every command module."""
    import typer

    from tiles_cli.app import build_app

    return typer.main.get_command(build_app())


def leaves(command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    """(path, command) of every command that runs, groups walked in name order."""
    subs = getattr(command, "commands", None)
    if subs is None:
        yield path, command
        return
    for name in sorted(subs):
        if not getattr(subs[name], "hidden", False):
            yield from leaves(subs[name], (*path, name))


def _cell(text: object) -> str:
    """Text safe inside a markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(param) -> str:
    """How a parameter's default reads: required, a flag's off, a value, or nothing."""
    if getattr(param, "required", False):
        return "required"
    value = param.default
    if value is None or callable(value) or getattr(param, "is_flag", False) and value is False:
        return ""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return f"`{value}`"


def _name(param, ctx) -> str:
    """The option's flags and metavar (an argument's metavar) as --help prints them."""
    if param.param_type_name == "argument":
        return f"`{param.make_metavar(ctx)}`"
    flags = ", ".join([*param.opts, *param.secondary_opts])
    if getattr(param, "is_flag", False):
        return f"`{flags}`"
    return f"`{flags} {param.make_metavar(ctx)}`"


def _source(param) -> str:
    """The environment variable an option reads, and its tiles.toml key when it is a setting."""
    from tiles_cli.settings import BY_ENV

    env = param.envvar if isinstance(param.envvar, str) else None
    if env is None:
        return ""
    s = BY_ENV.get(env)
    return f"`{env}`" + (f", `{s.key}`" if s else "")


def command_section(path: tuple[str, ...], command) -> list[str]:
    """One command's heading, usage, help and parameter table."""
    title = " ".join(("tiles", *path))
    lines = [f"### {title}", ""]
    args = " ".join(p.human_readable_name for p in command.params if p.param_type_name == "argument")
    lines += [f"`{title} [OPTIONS]{' ' + args if args else ''}`", ""]
    lines += [(command.help or "").strip(), ""]
    import typer

    ctx = typer.Context(command, info_name=title)
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    if params:
        lines += ["| parameter | default | env, tiles.toml | what |", "|---|---|---|---|"]
        for p in params:
            lines.append(f"| {_name(p, ctx)} | {_default(p)} | {_source(p)} | {_cell(getattr(p, 'help', '') or '')} |")
        lines.append("")
    return lines


def settings_section() -> list[str]:
    from tiles_cli.settings import SETTINGS, environment

    lines = ["## Settings and environment", ""]
    lines += ["| tiles.toml key | environment | default | what |", "|---|---|---|---|"]
    for s in SETTINGS:
        lines.append(f"| `{s.key}` | `{s.env}` | {f'`{s.default}`' if s.default else ''} | {_cell(s.help)} |")
    lines += ["", "Read from the environment only:", "", "| variable | what |", "|---|---|"]
    lines += [f"| `{name}` | {_cell(text)} |" for name, text in environment()]
    return [*lines, ""]


def exit_section() -> list[str]:
    from tilelib.errors import EXIT_CODES

    lines = ["## Exit codes", "", "One table, `tilelib.errors.EXIT_CODES`: the first type an error is wins.", ""]
    lines += ["| code | errors | meaning |", "|---|---|---|", "| 0 | | success |"]
    by_code: dict[int, list[type]] = {}
    for cls, code in EXIT_CODES:
        by_code.setdefault(code, []).append(cls)
    also = {1: "anything else", 2: "Click's usage errors: an unknown option, a missing argument, a bad value"}
    for code in sorted(by_code):
        kinds = by_code[code]
        names = ", ".join(f"`{c.__module__}.{c.__qualname__}`" for c in kinds)
        meaning = [_cell((c.__doc__ or "").strip().split("\n\n")[0]).rstrip(".") for c in kinds if c.__doc__]
        lines.append(f"| {code} | {names} | {'; '.join([*meaning, *([also[code]] if code in also else [])])} |")
    lines += ["| 130 | | interrupted (Ctrl-C) |", ""]
    return lines


def render() -> str:
    """The whole page."""
    tree = command_tree()
    commands = list(leaves(tree))
    lines = [HEADER, "## Commands", ""]
    for path, command in commands:
        anchor = "-".join(("tiles", *path))
        lines.append(f"- [`tiles {' '.join(path)}`](#{anchor}): {_cell(command.get_short_help_str(limit=200))}")
    lines.append("")
    for path, command in commands:
        lines += command_section(path, command)
    lines += settings_section()
    lines += exit_section()
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/commands.md differs from the CLI")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if DOC.read_text("utf-8") != text:
            print(f"{DOC.relative_to(ROOT)} is stale: run python scripts/make_commands_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, "utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
