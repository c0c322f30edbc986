"""The options of one ``tiles referee serve``, declared once: ``ServeOptions``, each field with its
default, its limits and the help the command line shows (``field_option`` in ``tiles_cli.options``
makes the typer option from them). Light on purpose — the standard library and ``quota`` only — so the
CLI reads it at start-up without loading the service.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from referee.service.quota import Quotas


def _opt(default: Any, help: str, **limits: Any) -> Any:
    """A field whose command-line option is ``--<name>`` with this help and these limits (min, max)."""
    return field(default=default, metadata={"help": help, **limits})


_PER = "per --quota-window"


@dataclass(frozen=True)
class ServeOptions:
    """The options of one ``tiles referee serve`` (the command's help is made from the fields')."""

    library: str
    runs: str
    manifests: tuple[str, ...] = ()
    days: tuple[str, ...] = ()
    host: str = _opt("127.0.0.1", "Address to listen on.")
    port: int = _opt(8000, "TCP port.", min=1, max=65535)
    max_body: int = _opt(64 * 1024, "Largest request body in bytes.", min=1)
    max_moves: int = _opt(64, "Most moves in one request.", min=1)
    poll: float = _opt(
        10.0,
        "Seconds between looks for new days in the library (without --manifest and --day: a day built later is "
        "offered).",
        min=0.1,
        max=3600,
    )
    workers: int = _opt(
        1,
        "Worker processes (uvicorn's); with more than one, a postgresql:// --runs is the usual choice.",
        min=1,
        max=64,
    )
    quota_runs: int = _opt(
        Quotas.runs_per_address,
        f"Runs one client address may create {_PER} (0: no limit); past it 429 with Retry-After.",
        min=0,
    )
    quota_moves: int = _opt(
        Quotas.moves_per_token, f"Moves requests one run (its token) may send {_PER} (0: no limit).", min=0
    )
    quota_address_moves: int = _opt(
        Quotas.moves_per_address,
        f"Moves requests one client address may send {_PER}, over all its runs (0: no limit).",
        min=0,
    )
    quota_window: float = _opt(
        Quotas.window,
        "Seconds of one quota window (counted in the runs database: every worker and host sees them).",
        min=1.0,
        max=86400.0,
    )
    access_log: str = _opt("text", "One line per request on stderr: text, json (JSON lines) or off.")
    trust_proxy: str = _opt(
        "127.0.0.1",
        "Comma-separated addresses (or *) of reverse proxies whose X-Forwarded-For names the client (quotas, "
        "access log).",
    )

    def quotas(self) -> Quotas:
        return Quotas(self.quota_runs, self.quota_moves, self.quota_address_moves, self.quota_window)

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls, text: str) -> ServeOptions:
        raw = json.loads(text)
        return cls(**{**raw, "manifests": tuple(raw["manifests"]), "days": tuple(raw["days"])})
