"""The one registry of plug-ins (``tilelib.plugins``): every packer, remote backend and CLI command group
is found through it, each module is what its row says, and no module of a plug-in package that is a
plug-in is missing from it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
import typer.main

from remote.backend import Backend, open_backend
from tilelib import plugins
from tilelib.errors import BadInput

PACKER_PROTOCOL = ("NAME", "VERSION", "DEFAULTS", "ORDER", "check_params", "pack")


def package_modules(package: str) -> list[str]:
    """Every module of ``package``, imported (a test may load what the CLI must not)."""
    path = importlib.import_module(package).__path__
    return [f"{package}.{m.name}" for m in pkgutil.iter_modules(path)]


def test_every_packer_module_is_a_row_and_declares_its_name_and_order():
    from packers import DEFAULT_PACKER, PACKERS

    rows = plugins.names(plugins.PACKER)
    assert list(PACKERS) == list(rows) and DEFAULT_PACKER == rows[0]
    for name in rows:
        mod = plugins.load(plugins.PACKER, name)
        assert all(hasattr(mod, attr) for attr in PACKER_PROTOCOL), name
        assert mod.NAME == name and PACKERS[name].order == mod.ORDER
    found = [m for m in package_modules("packers") if hasattr(importlib.import_module(m), "pack")]
    assert sorted(found) == sorted(plugins.modules(plugins.PACKER))


def test_every_backend_module_is_a_row_and_opens_its_schemes(tmp_path):
    for scheme in plugins.names(plugins.REMOTE):
        mod = plugins.load(plugins.REMOTE, scheme)
        assert inspect.isclass(mod.BACKEND) and issubclass(mod.BACKEND, Backend), scheme
    found = [m for m in package_modules("remote") if hasattr(importlib.import_module(m), "BACKEND")]
    assert sorted(found) == sorted(plugins.modules(plugins.REMOTE))
    assert type(open_backend(f"file://{tmp_path}")).__module__ == "remote.local"
    assert type(open_backend("https://example.org/lib")).__module__ == "remote.http"
    with pytest.raises(BadInput):
        open_backend("ftp://example.org/lib")


def test_every_command_group_is_a_row_and_the_cli_holds_exactly_them():
    from tiles_cli import app as cli

    full = typer.main.get_command(cli.build_app())
    assert sorted(full.commands) == sorted(plugins.names(plugins.COMMAND))
    found = [m for m in package_modules("tiles_cli") if hasattr(importlib.import_module(m), "register")]
    assert sorted(found) == sorted(plugins.modules(plugins.COMMAND))


def test_an_unknown_name_is_one_line_naming_the_known_ones():
    for kind, name in ((plugins.PACKER, "spiral"), (plugins.REMOTE, "ftp"), (plugins.COMMAND, "nosuch")):
        with pytest.raises(BadInput) as e:
            plugins.load(kind, name)
        text = str(e.value)
        assert "\n" not in text and repr(name) in text
        assert all(known in text for known in plugins.names(kind))


def test_the_registry_imports_nothing_it_names():
    """Listing the packers (``--packer``'s help) loads none of them."""
    import subprocess
    import sys

    code = (
        "import sys; from tilelib import plugins; plugins.names('packer'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('packers', 'remote', 'tiles_cli', 'numpy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
