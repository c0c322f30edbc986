"""The build's options declared once (``daily.options``): every option of ``tiles daily build`` that
is a field of ``BuildOptions`` defaults to that field's default, and the plan resolves the one left
open (``workers``) as the stitch expects."""

from __future__ import annotations

from dataclasses import replace

import typer.main

from daily.build import plan
from daily.options import BuildOptions, default
from stitcher.regions import default_workers
from tiles_cli import app as cli

# The options of ``tiles daily build`` that fill a field of the same name and default to it (the
# folder's settings — library, out, remote — default to ``tiles.toml``'s, and profile to its preset).
SHARED = ("size", "packer", "params", "seed", "force", "workers", "reuse")


def test_every_build_option_defaults_to_its_field():
    build = typer.main.get_command(cli.build_app()).commands["daily"].commands["build"]
    params = {p.name: p for p in build.params}
    for name in SHARED:
        assert params[name].default == default(name), name
    assert (default("size"), default("reuse"), default("workers")) == (1000, "fresh", None)


def test_the_plan_gives_the_stitch_the_default_workers(tmp_path):
    opts = BuildOptions(day="2026-12-01", library=tmp_path / "lib.sqlite", out_dir=tmp_path, seed=b"\0" * 32)
    assert plan(opts).workers == default_workers()
    assert plan(replace(opts, workers=1)).workers == 1
