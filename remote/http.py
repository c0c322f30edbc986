"""A read-only remote over plain HTTPS (FORMAT §11): anyone can pull and replay without credentials.

Any static host that serves the remote's layout — an R2 public bucket, a CDN, ``python -m
http.server`` over a ``file://`` remote — is a remote: ``GET <base>/HEAD.json`` and
``GET <base>/snapshots/<sha>.sqlite``. Everything pulled is checked exactly as from S3 (sha256,
integrity, every row), so the host need not be trusted. Listing is not part of a static layout,
so a poisoned HEAD is healed along the chain HEAD itself names (parent, history). Writes are
refused: this backend never publishes. ``http://`` is accepted only for loopback hosts (tests,
a local mirror); anything else must be ``https://``.
"""

from __future__ import annotations

import hashlib
import urllib.error
import urllib.request
from contextlib import nullcontext
from pathlib import Path
from typing import NoReturn

from remote.backend import (
    HEAD_NAME,
    Backend,
    Head,
    ProgressFactory,
    SnapshotInfo,
    bounded,
    file_name,
    snapshot_name,
)
from remote.url import RemoteURL
from tilelib.errors import RemoteError, disk_error

TIMEOUT = 10.0  # seconds per connect and per read: a silent host fails well inside 30 s
CHUNK = 1 << 20
MAX_HEAD = 64 * 1024


class ReadOnlyRemote(RemoteError):
    """A write was asked of an https:// remote, which is read-only."""


class HttpBackend(Backend):
    def __init__(self, url: RemoteURL) -> None:
        self.url = url

    def _get(self, name: str):
        req = urllib.request.Request(f"{self.url.base}/{name}", headers={"User-Agent": "tiles"})
        try:
            return urllib.request.urlopen(req, timeout=TIMEOUT)  # noqa: S310 (scheme checked by remote.url)
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise RemoteError(f"remote {self.url}: GET {name} answered HTTP {err.code}") from err
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise RemoteError(f"remote {self.url}: cannot reach the host while reading {name} ({reason})") from err

    def _read(self, name: str, limit: int):
        """(at most ``limit`` + 1 bytes of ``name``, its headers), or None when it is absent."""
        resp = self._get(name)
        if resp is None:
            return None
        with resp:
            try:
                return resp.read(limit + 1), resp.headers
            except OSError as err:
                raise RemoteError(f"remote {self.url}: reading {name} failed ({err})") from err

    def get_head(self) -> Head | None:
        got = self._read(HEAD_NAME, MAX_HEAD)
        if got is None:
            return None
        body, headers = got
        etag = headers.get("ETag") or '"' + hashlib.sha256(body).hexdigest() + '"'
        return Head(body, etag)

    def get_snapshot(self, sha: str, dest: Path, progress: ProgressFactory | None = None) -> int:
        name = snapshot_name(sha)
        resp = self._get(name)
        if resp is None:
            raise RemoteError(f"remote {self.url}: snapshot {sha[:12]}… is missing")
        size = int(resp.headers.get("Content-Length") or 0) or None
        done = 0
        try:
            with (
                resp,
                open(dest, "wb") as out,
                progress(f"pulling {sha[:12]}…", size) if progress else nullcontext() as bar,
            ):
                while chunk := resp.read(CHUNK):
                    out.write(chunk)
                    done += len(chunk)
                    if bar is not None:
                        bar.advance(len(chunk))
        except OSError as err:  # a full local disk is exit 3 (DiskFull), not the remote's fault
            raise disk_error(err) or RemoteError(
                f"remote {self.url}: downloading snapshot {sha[:12]}… failed ({err})"
            ) from err
        return done

    def has_snapshot(self, sha: str) -> bool:
        resp = self._get(snapshot_name(sha))
        if resp is None:
            return False
        resp.close()
        return True

    def list_snapshots(self) -> list[SnapshotInfo]:
        return []  # a static host cannot list; fallback follows HEAD's own chain

    def _read_only(self, what: str) -> NoReturn:
        raise ReadOnlyRemote(
            f"remote {self.url} is read-only (https://): cannot {what}; push to the "
            "s3:// or file:// remote that it mirrors"
        )

    def prepare(self) -> None:
        self._read_only("write")

    def put_head(self, body: bytes, if_match: str | None) -> str:
        self._read_only("swap HEAD")

    def put_snapshot(self, sha: str, src: Path, progress: ProgressFactory | None = None) -> bool:
        self._read_only("upload a snapshot")

    def delete_snapshot(self, sha: str) -> None:
        self._read_only("delete a snapshot")

    def put_file(self, name: str, src: Path, content_type: str) -> None:
        self._read_only(f"upload {name}")

    def get_file(self, name: str, limit: int) -> bytes | None:
        got = self._read(file_name(name), limit)
        return None if got is None else bounded(self.url, name, got[0], limit)


BACKEND = HttpBackend  # the plug-in this module is (``tilelib.plugins``)
