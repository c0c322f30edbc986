"""Publishing a finished day to the public mirror (FORMAT §11, "The public mirror").

The library remote holds the stock — the tiles of boards not yet played — so it stays private.
What the public gets of a day, once it is over (UTC), is what a verifier needs and nothing more:

    <prefix>/days/<D>.json            the manifest (its exact text)
    <prefix>/days/<D>.bundle.sqlite   the day's bundle (``referee.bundle``)
    <prefix>/days/<D>.seed            the revealed seed, 64 hex digits and a newline (when the
                                      secret is at hand)
    <prefix>/days/index.json          every published day, written last

``publish_day`` refuses (BadInput, before any byte moves) a day that is not over, a mirror that
is the library's own remote or holds a library (a ``HEAD.json``), and a read-only (https://)
mirror; a secret that does not derive the seed the manifest commits to is refused too.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from daily.seed import check_revealable, day_seed
from referee.bundle import BundleReport, write_bundle
from remote.backend import HEAD_NAME, open_backend
from remote.url import parse_remote
from tilelib.days import seed_commit
from tilelib.errors import BadInput, RemoteError
from tilelib.store import Library

PUBLIC_ENV = "TILES_PUBLIC_REMOTE"
DAYS = "days"
INDEX = f"{DAYS}/index.json"
INDEX_FORMAT = "tiles-days/1"
MAX_INDEX = 16 << 20  # ~60,000 days of entries


@dataclass(frozen=True)
class PublishReport:
    """What ``publish_day`` uploaded."""

    day: str
    remote: str
    bundle: BundleReport
    files: tuple[str, ...]

    def line(self) -> str:
        return (
            f"published {self.day} to {self.remote}: {', '.join(self.files)} ({self.bundle.tiles:,} tile rows, "
            f"{self.bundle.bytes:,} bytes of bundle)"
        )


def day_files(day: str) -> dict[str, str]:
    """The mirror's names for a day's files."""
    return {"manifest": f"{DAYS}/{day}.json", "bundle": f"{DAYS}/{day}.bundle.sqlite", "seed": f"{DAYS}/{day}.seed"}


def _check_mirror(public: str | None, private: str | None):
    """The parsed mirror URL, refused when it is read-only or the library's own remote."""
    if not public:
        raise BadInput(
            f"no public mirror given (--to URL, {PUBLIC_ENV}, or `tiles init --public-remote URL` for this "
            "folder's tiles.toml)"
        )
    url = parse_remote(public)
    if url.scheme in ("http", "https"):
        raise BadInput(
            f"the public mirror {url} is read-only (https://): publish to the s3:// or file:// remote that it serves"
        )
    if private and parse_remote(private) == url:
        raise BadInput(
            f"{url} is the library's remote (TILES_REMOTE), which holds the stock: the public "
            "mirror must be another place"
        )
    return url


def _index(backend, url) -> list[dict]:
    """The entries of the mirror's index (none yet: [])."""
    body = backend.get_file(INDEX, MAX_INDEX)
    if body is None:
        return []
    try:
        doc = json.loads(body)
        days = doc["days"]
        if (
            doc.get("format") != INDEX_FORMAT
            or not isinstance(days, list)
            or not all(isinstance(e, dict) and isinstance(e.get("day"), str) for e in days)
        ):
            raise ValueError("unexpected shape")
    except (ValueError, KeyError, TypeError) as err:
        raise RemoteError(f"remote {url}: {INDEX} is not a tiles day index ({err})") from None
    return days


def index_text(entries: list[dict]) -> str:
    """The index file: ``{"format", "days": [...]}`` by day, one entry per day, compact, newline."""
    by_day = {e["day"]: e for e in entries}
    return (
        json.dumps(
            {"format": INDEX_FORMAT, "days": [by_day[d] for d in sorted(by_day)]}, separators=(",", ":"), sort_keys=True
        )
        + "\n"
    )


def publish_day(
    lib: Library,
    day: str,
    public: str | None,
    *,
    private: str | None = None,
    secret: str | None = None,
    force: bool = False,
    today: dt.date | None = None,
) -> PublishReport:
    """Write the day's bundle and upload it with the manifest (and the seed, given the secret) to
    the public mirror ``public``, then add the day to its index."""
    check_revealable(day, today, force)
    url = _check_mirror(public, private)
    backend = open_backend(url)
    if backend.get_file(HEAD_NAME, 1 << 16) is not None:
        raise BadInput(
            f"{url} holds a library (HEAD.json): the public mirror must not be a library remote, "
            "whose snapshots hold the stock"
        )
    names = day_files(day)
    with tempfile.TemporaryDirectory(prefix="tiles-publish-") as tmp:
        rep = write_bundle(lib, day, Path(tmp) / "bundle.sqlite")
        manifest = Path(tmp) / "manifest.json"
        manifest.write_text(rep.manifest.to_json(), encoding="ascii")  # the stored text (FORMAT §9: one layout)
        uploads = [
            (names["bundle"], rep.path, "application/vnd.sqlite3"),
            (names["manifest"], manifest, "application/json"),
        ]
        if secret:
            seed = day_seed(secret, day)
            if seed_commit(seed) != rep.manifest.seed_commit:
                raise BadInput(f"TILES_SECRET does not derive the seed the manifest of {day} commits to")
            seed_file = Path(tmp) / "seed"
            seed_file.write_text(seed.hex() + "\n")
            uploads.append((names["seed"], seed_file, "text/plain"))
        entries = _index(backend, url)
        for name, src, ctype in uploads:
            backend.put_file(name, src, ctype)
        entry = {
            "day": day,
            "board": rep.manifest.digest(),
            "manifest": names["manifest"],
            "bundle": names["bundle"],
            "bundle_sha256": hashlib.sha256(rep.path.read_bytes()).hexdigest(),
            "bundle_bytes": rep.bytes,
            "seed": names["seed"] if secret else None,
        }
        index = Path(tmp) / "index.json"
        index.write_text(index_text([e for e in entries if e["day"] != day] + [entry]))
        backend.put_file(INDEX, index, "application/json")
    return PublishReport(day=day, remote=str(url), bundle=rep, files=tuple(n for n, _s, _c in uploads) + (INDEX,))


__all__ = ["DAYS", "INDEX", "INDEX_FORMAT", "PUBLIC_ENV", "PublishReport", "day_files", "index_text", "publish_day"]
