"""`tiles library pull | push | snapshots`: sync the library with a remote (FORMAT §11).

Thin: parse options, call one function of ``remote.sync``, print one summary line.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tiles_cli.library import library_app
from tiles_cli.options import Check, Integrity, LibraryOpt, RemoteOpt, Verify
from tiles_cli.progress import progress

if TYPE_CHECKING:
    from remote.sync import Fetching

VerifyOpt = typer.Option(
    Verify.new.value,
    "--verify",
    help="Audit incoming tile rows again as they are merged (every fetched file is audited whole when it "
    "is proven): new (every row the local file lacks), sample (256 random rows), none.",
)


def register(app: typer.Typer) -> None:
    """Add this module's commands to `tiles library` (the group's own module adds the group)."""
    library_app.command("pull")(pull_cmd)
    library_app.command("push")(push_cmd)
    library_app.command("status")(status_cmd)
    library_app.command("snapshots")(snapshots_cmd)


IntegrityOpt = typer.Option(
    Integrity.full.value,
    "--integrity",
    help="Check of a downloaded snapshot after its sha256: "
    "full (PRAGMA integrity_check, FORMAT default) or quick (PRAGMA quick_check).",
)


CheckOpt = typer.Option(
    Check.new.value,
    "--check",
    help="What push proves about the local file before publishing it: "
    "new (PRAGMA quick_check and the rows and manifests added since the last verified "
    "push; everything if a row was changed) or full (integrity_check, every row, every "
    "manifest).",
)


def _note(note: str | None) -> None:
    """A poisoned remote was healed around: say so, on stderr, in one line."""
    if note:
        typer.echo(f"tiles: {note}", err=True)


def _sha(snapshot: str | None) -> str:
    """A snapshot's sha as the summary lines show it (its first 12 hex digits). Only the pull of an
    empty remote has no snapshot, and its line names none."""
    assert snapshot is not None, "a pull or push that reached a snapshot names it"
    return snapshot[:12]


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _fetching(verify: Verify, integrity: Integrity) -> Fetching:
    """How the command's pull or push reads the remote: progress bars and the two checks asked for."""
    from remote.sync import Fetching

    return Fetching(progress, verify.value, integrity.value)


def pull_cmd(
    library: Path = LibraryOpt, remote: str = RemoteOpt, verify: Verify = VerifyOpt, integrity: Integrity = IntegrityOpt
) -> None:
    """Merge the remote's HEAD snapshot into the local library (never drops a local row)."""
    from remote.backend import open_backend
    from remote.sync import pull

    backend = open_backend(remote)
    r = pull(library, backend, _fetching(verify, integrity))
    _note(r.note)
    if r.status == "empty":
        typer.echo(f"remote {backend.url} is empty; nothing to pull")
    elif r.status == "up_to_date":
        typer.echo(f"already up to date with snapshot {_sha(r.snapshot)}…")
    else:
        verb = "cloned" if r.status == "cloned" else "pulled"
        typer.echo(
            f"{verb} {r.tiles_added:,} new tiles, snapshot {_sha(r.snapshot)}…, {_mb(r.bytes)} in {r.seconds:.1f} s"
        )


def push_cmd(
    library: Path = LibraryOpt,
    remote: str = RemoteOpt,
    verify: Verify = VerifyOpt,
    integrity: Integrity = IntegrityOpt,
    check: Check = CheckOpt,
    compact: bool = typer.Option(
        False,
        "--compact",
        help="Write a full snapshot even if a delta would do (pushes compact by themselves every 16 deltas).",
    ),
) -> None:
    """Publish the local library as the remote's HEAD (merging what others pushed first).

    Nothing corrupt is published: the file must pass --check first (exit 3 naming the first bad row)."""
    from remote.backend import open_backend
    from remote.sync import push

    backend = open_backend(remote)
    r = push(library, backend, _fetching(verify, integrity), check=check.value, compact=compact)
    _note(r.note)
    merged = f" (merged {r.merged_tiles:,} from the remote first)" if r.merged_tiles else ""
    if r.status == "up_to_date":
        typer.echo(f"nothing to push: remote is up to date at snapshot {_sha(r.snapshot)}…{merged}")
        return
    retries = f", {r.attempts - 1} lost race(s) retried" if r.attempts > 1 else ""
    typer.echo(
        f"pushed {r.new_tiles:,} new tiles, {r.kind} {_sha(r.snapshot)}…, "
        f"{_mb(r.bytes)} in {r.seconds:.1f} s{retries}{merged}"
    )


def status_cmd(library: Path = LibraryOpt, remote: str = RemoteOpt) -> None:
    """Local library against the remote: ahead (push), behind (pull), last built day, last sync; the stock."""
    from remote.backend import open_backend
    from remote.sync import status
    from tilelib import stock
    from tilelib.store import Library

    typer.echo(status(library, open_backend(remote)).line())
    with Library.open(library) as lib:
        for text in stock.lines(stock.report(lib.conn, library)):
            typer.echo(f"stock {text}")


def snapshots_cmd(
    remote: str = RemoteOpt,
    prune_keep: int = typer.Option(
        None,
        "--prune-keep",
        min=0,
        help="Delete all but the K newest snapshots (HEAD's and its parent's are always kept, and every "
        "one a stored day's replay needs: the library is pulled first to know them).",
    ),
    min_age: float = typer.Option(3600.0, "--min-age", help="Never prune a snapshot younger than this many seconds."),
    library: Path = LibraryOpt,
) -> None:
    """List the remote's snapshots (newest last); prune old ones only when asked."""
    from remote.backend import open_backend
    from remote.sync import current_snapshot, prune_keeping_replays

    backend = open_backend(remote)
    if prune_keep is not None:
        deleted, kept, named = prune_keeping_replays(library, backend, prune_keep, min_age)
        needed = sum(1 for s in kept if s.sha in named)
        typer.echo(
            f"pruned {len(deleted)} snapshot(s) ({_mb(sum(s.size for s in deleted))}), kept {len(kept)} "
            f"({needed} of them named by a stored day's start state)"
        )
        return
    head = current_snapshot(backend)
    snaps = backend.list_snapshots()
    for s in snaps:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s.modified))
        typer.echo(f"{s.sha}  {s.size:>14,}  {when}Z{'  HEAD' if s.sha == head else ''}")
    typer.echo(f"{len(snaps)} snapshot(s), {_mb(sum(s.size for s in snaps))}")
