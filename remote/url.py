"""Remote URLs (FORMAT §11): ``s3://bucket/prefix``, ``file:///absolute/dir`` and the read-only
``https://host/prefix`` (``http://`` for loopback hosts only); anything else is BadInput.

Parsing is strict on purpose: a typo in a remote URL must fail before any byte
moves, not create a second remote somewhere unexpected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from tilelib.errors import BadInput

# S3 bucket naming rules (3-63 chars, lower-case letters, digits, dots, hyphens,
# starting and ending with a letter or digit). R2 follows the same rules.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_PREFIX_PART = re.compile(r"^[A-Za-z0-9._~!$&'()*+,;=:@-]+$")


# How a remote is given, the one wording every message that asks for one uses
REMOTE_ADVICE = "--remote URL, TILES_REMOTE, or `tiles init --remote URL` for this folder's tiles.toml"


@dataclass(frozen=True)
class RemoteURL:
    """A parsed remote: ``scheme`` is "s3" (bucket, prefix) or "file" (path)."""

    scheme: str
    bucket: str = ""
    prefix: str = ""  # no leading or trailing slash; "" means the bucket root
    path: str = ""  # absolute directory for file://
    base: str = ""  # http(s)://host[:port][/prefix] without a trailing slash, for https://

    def __str__(self) -> str:
        if self.scheme in ("http", "https"):
            return self.base
        if self.scheme == "s3":
            return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"
        return f"file://{self.path}"

    def key(self, name: str) -> str:
        """The S3 key of ``name`` under the prefix."""
        return f"{self.prefix}/{name}" if self.prefix else name


def parse_remote(url: str | None) -> RemoteURL:
    """Parse a remote URL; raise BadInput with the reason if it is not one we accept (None: none was given)."""
    if not isinstance(url, str) or not url.strip():
        raise BadInput(f"no remote given ({REMOTE_ADVICE})")
    url = url.strip()
    parts = urlsplit(url)
    if parts.query or parts.fragment:
        raise BadInput(f"remote URL {url!r} must not have a query or fragment")
    if parts.scheme == "s3":
        return _parse_s3(url, parts.netloc, parts.path)
    if parts.scheme == "file":
        return _parse_file(url, parts.netloc, parts.path)
    if parts.scheme in ("http", "https"):
        return _parse_http(url, parts)
    raise BadInput(f"remote URL {url!r} must start with s3://, file:/// or https://")


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _parse_http(url: str, parts) -> RemoteURL:
    try:
        host, port = parts.hostname, parts.port
    except ValueError as err:
        raise BadInput(f"remote URL {url!r}: {err}") from err
    if not host or parts.username or parts.password:
        raise BadInput(f"remote URL {url!r} must name a host (and no credentials)")
    if parts.scheme == "http" and host not in LOOPBACK:
        raise BadInput(f"remote URL {url!r}: use https:// (plain http:// only for a loopback mirror)")
    segs = [p for p in parts.path.split("/") if p]
    for p in segs:
        if p in (".", "..") or not _PREFIX_PART.match(p):
            raise BadInput(f"remote URL {url!r}: path part {p!r} is not allowed")
    netloc = f"[{host}]" if ":" in host else host
    base = f"{parts.scheme}://{netloc}" + (f":{port}" if port else "") + "".join("/" + p for p in segs)
    return RemoteURL(parts.scheme, base=base)


def _parse_s3(url: str, netloc: str, path: str) -> RemoteURL:
    if not _BUCKET.match(netloc) or ".." in netloc:
        raise BadInput(f"remote URL {url!r}: {netloc!r} is not a valid bucket name")
    parts = [p for p in path.split("/") if p]
    for p in parts:
        if p in (".", "..") or not _PREFIX_PART.match(p):
            raise BadInput(f"remote URL {url!r}: prefix part {p!r} is not allowed")
    return RemoteURL("s3", bucket=netloc, prefix="/".join(parts))


def _parse_file(url: str, netloc: str, path: str) -> RemoteURL:
    if netloc not in ("", "localhost"):
        raise BadInput(f"remote URL {url!r}: file URLs name a local directory (file:///dir), not host {netloc!r}")
    path = unquote(path)
    if not path.startswith("/"):
        raise BadInput(f"remote URL {url!r}: the directory must be absolute (file:///dir)")
    p = PurePosixPath(path)
    if any(part == ".." for part in p.parts):
        raise BadInput(f"remote URL {url!r}: '..' is not allowed in the directory")
    norm = str(p)
    if norm == "/":
        raise BadInput(f"remote URL {url!r}: refusing the file-system root as a remote")
    return RemoteURL("file", path=norm)
