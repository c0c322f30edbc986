"""``s3://bucket/prefix`` remote through boto3: AWS S3, Cloudflare R2, or any S3 API (moto in tests).

Endpoint from ``TILES_S3_ENDPOINT`` (R2: ``https://<account>.r2.cloudflarestorage.com``);
credentials the usual boto3 way (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``,
``AWS_PROFILE``, ...); region from ``AWS_REGION``/``AWS_DEFAULT_REGION``, else
"auto" when an endpoint is set (what R2 expects). Checksums are computed and
validated only when an operation requires them, because R2 rejects some of the
newer default checksum headers.

The HEAD swap is a plain ``put_object`` with ``IfMatch=<etag>`` or
``IfNoneMatch="*"`` (S3 and R2 both make these atomic); 412 PreconditionFailed
and 409 ConditionalRequestConflict (a concurrent conditional write in flight)
both mean we lost the race. Snapshots go through boto3's managed transfer
(multipart above ``multipart_threshold``, parts in parallel): they are
content-addressed and immutable, so they need no condition, and an upload is
skipped when the snapshot already exists.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from pathlib import Path
from urllib.parse import urlsplit

import boto3
import botocore.exceptions as bex
from boto3.exceptions import S3UploadFailedError
from boto3.s3.transfer import TransferConfig
from botocore.config import Config

from remote.backend import (
    HEAD_NAME,
    SNAPSHOT_DIR,
    Backend,
    Head,
    LostRace,
    ProgressFactory,
    SnapshotInfo,
    bounded,
    file_name,
    listed,
    snapshot_name,
)
from remote.url import RemoteURL
from tilelib.errors import BadInput, RemoteError, TilesError, disk_error

MiB = 1 << 20
LOST_RACE_CODES = {"PreconditionFailed", "ConditionalRequestConflict", "412", "409"}
AUTH_CODES = {
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "AccessDenied",
    "ExpiredToken",
    "InvalidToken",
    "InvalidClientTokenId",
    "Unauthorized",
    "403",
    "401",
}
NETWORK_ERRORS = (
    bex.EndpointConnectionError,
    bex.ConnectTimeoutError,
    bex.ReadTimeoutError,
    bex.ConnectionClosedError,
    bex.ProxyConnectionError,
    bex.SSLError,
)


# Making a boto3 client costs 0.1-1 s (it loads the service model), so clients are
# cached per process, keyed by every environment variable that shapes them; a
# boto3 client is thread-safe, so concurrent pushes may share one.
_ENV_KEYS = (
    "TILES_S3_ENDPOINT",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
)
_clients: dict[tuple, object] = {}
_clients_lock = threading.Lock()


def check_endpoint(endpoint: str) -> str:
    """An S3 endpoint URL: http(s)://host[:port][/path]; BadInput naming TILES_S3_ENDPOINT otherwise."""
    try:
        u = urlsplit(endpoint)
        u.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError as err:
        raise BadInput(f"TILES_S3_ENDPOINT {endpoint!r} is not a URL ({err})") from err
    if u.scheme not in ("http", "https") or not u.hostname:
        raise BadInput(f"TILES_S3_ENDPOINT {endpoint!r} must be an http:// or https:// URL with a host")
    return endpoint


LOG = logging.getLogger("remote.s3")  # one line per failed attempt (a WARNING: shown without set-up)


def log_attempt(attempts: int, max_attempts: int, response=None, caught_exception=None, operation=None, **_kw) -> None:
    """botocore's ``needs-retry`` hook, run before its retry handler decides: one log line for an
    attempt that failed with what standard retries retry (a lost or cut connection, a timeout, 5xx,
    429 or a throttling code), saying whether another attempt follows. Returns None, so botocore's
    own decision stands."""
    if caught_exception is not None:
        fault = type(caught_exception).__name__
    else:
        http = response[0] if response else None
        code = str(((response[1] or {}).get("Error") or {}).get("Code", "")) if response else ""
        if http is None or (http.status_code < 500 and http.status_code != 429 and "Throttl" not in code):
            return
        fault = f"HTTP {http.status_code}" + (f" {code}" if code else "")
    name = getattr(operation, "name", "request")
    then = "retrying" if attempts < max_attempts else "giving up"
    LOG.warning("s3: %s attempt %d of %d failed (%s); %s", name, attempts, max_attempts, fault, then)


# Retries: botocore's standard mode (it retries lost and cut connections, timeouts, 5xx, 429 and
# throttling codes, with jittered exponential backoff), ``max_attempts`` attempts in all. Timeouts: a
# server that accepts connections but never answers must fail in well under 30 s (FORMAT: 2 attempts
# x (4 s connect + 6 s per read) + backoff). Each read of a large transfer is a
# separate 6 s window, so big snapshots still stream.
def make_client(
    endpoint: str | None = None, *, max_attempts: int = 2, connect_timeout: float = 4, read_timeout: float = 6
):
    """A boto3 S3 client configured for R2/S3/moto from the environment (cached per configuration)."""
    endpoint = endpoint if endpoint is not None else (os.environ.get("TILES_S3_ENDPOINT") or None)
    if endpoint is not None:
        check_endpoint(endpoint)
    key = (endpoint, max_attempts, connect_timeout, read_timeout, *(os.environ.get(k) for k in _ENV_KEYS))
    with _clients_lock:
        if key not in _clients:
            _clients[key] = _new_client(endpoint, max_attempts, connect_timeout, read_timeout)
        return _clients[key]


def _new_client(endpoint: str | None, max_attempts: int, connect_timeout: float, read_timeout: float):
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or ("auto" if endpoint else None)
    cfg = Config(
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        # total_max_attempts counts every attempt; botocore reads a bare "max_attempts" as retries
        # after the first (one more attempt than asked: 3 where FORMAT says 2)
        retries={"total_max_attempts": max_attempts, "mode": "standard"},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        max_pool_connections=16,
    )
    client = boto3.session.Session().client("s3", endpoint_url=endpoint, region_name=region, config=cfg)
    client.meta.events.register_first("needs-retry.s3", functools.partial(log_attempt, max_attempts=max_attempts))
    return client


def _code(err: bex.ClientError) -> tuple[str, int]:
    e = err.response.get("Error", {})
    return str(e.get("Code", "")), int(err.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)


PART_ENV = "TILES_S3_PART_MB"  # the multipart threshold and part size, MiB (S3's smallest part is 5)


def part_size(environ=None) -> int:
    """Bytes of a multipart upload's part, and the size from which an upload goes in parts:
    ``TILES_S3_PART_MB`` (5..5120), else 8 MiB; BadInput naming the variable otherwise."""
    raw = (os.environ if environ is None else environ).get(PART_ENV)
    if not raw:
        return 8 * MiB
    try:
        mb = int(raw)
    except ValueError:
        mb = 0
    if not 5 <= mb <= 5120:
        raise BadInput(f"{PART_ENV} must be a whole number of MiB in 5..5120 (S3's part sizes), not {raw[:20]!r}")
    return mb * MiB


class S3Backend(Backend):
    def __init__(
        self,
        url: RemoteURL,
        client=None,
        *,
        multipart_threshold: int | None = None,
        multipart_chunksize: int | None = None,
        max_concurrency: int = 10,
    ) -> None:
        self.url = url
        self.client = client if client is not None else make_client()
        part = part_size() if multipart_threshold is None or multipart_chunksize is None else 0
        multipart_threshold = multipart_threshold or part
        multipart_chunksize = multipart_chunksize or part
        self.transfer = TransferConfig(
            multipart_threshold=multipart_threshold,
            multipart_chunksize=multipart_chunksize,
            max_concurrency=max_concurrency,
        )
        self.endpoint = self.client.meta.endpoint_url

    # ------------------------------------------------------------ errors

    def _fail(self, err: Exception, doing: str) -> TilesError:
        """Translate a boto3/botocore error into a one-line RemoteError."""
        where = f"remote {self.url}"
        if isinstance(err, NETWORK_ERRORS):
            return RemoteError(f"{where}: cannot reach {self.endpoint} while {doing} ({type(err).__name__})")
        if isinstance(err, (bex.NoCredentialsError, bex.PartialCredentialsError)):
            return RemoteError(
                f"{where}: no S3 credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
            )
        if isinstance(err, bex.ClientError):
            code, status = _code(err)
            if code == "NoSuchBucket":
                return RemoteError(f"{where}: bucket {self.url.bucket!r} does not exist at {self.endpoint}")
            if code in AUTH_CODES or status in (401, 403):
                return RemoteError(
                    f"{where}: access denied while {doing} ({code or status}); check the "
                    f"credentials and the bucket's permissions"
                )
            msg = err.response.get("Error", {}).get("Message", "")
            return RemoteError(f"{where}: {doing} failed: {code or status} {msg}".rstrip())
        if isinstance(err, S3UploadFailedError):
            text = str(err).splitlines()[0]
            if "NoSuchBucket" in text:
                return RemoteError(f"{where}: bucket {self.url.bucket!r} does not exist at {self.endpoint}")
            return RemoteError(f"{where}: {doing} failed: {text}")
        if isinstance(err, bex.BotoCoreError):
            return RemoteError(f"{where}: {doing} failed: {str(err).splitlines()[0]}")
        full = disk_error(err)  # a download the local disk refused: exit 3, not the remote's fault
        if full is not None:
            return full
        raise err

    _RAISE = object()

    def _call(self, doing: str, fn, *, missing=_RAISE, race: bool = False, race_on_missing: bool = False):
        """Run one S3 call and translate what goes wrong, in one place: a 404 (not a missing
        bucket) returns ``missing`` (or calls it, if callable) when given; with ``race`` a refused
        condition is ``LostRace``; anything else becomes one ``RemoteError`` line (``_fail``), the
        boto error kept as its cause."""
        try:
            return fn()
        except bex.ClientError as err:
            code, status = _code(err)
            if race and (code in LOST_RACE_CODES or status in (409, 412) or (race_on_missing and code == "NoSuchKey")):
                raise LostRace(f"remote {self.url}: HEAD changed under us ({code or status})") from err
            if missing is not self._RAISE and (code == "NoSuchKey" or status == 404) and code != "NoSuchBucket":
                return missing() if callable(missing) else missing
            raise self._fail(err, doing) from err
        except (LostRace, RemoteError):
            raise
        except Exception as err:  # noqa: BLE001 - translated or re-raised by _fail
            raise self._fail(err, doing) from err

    # ------------------------------------------------------------ Backend

    def _body(self, key: str, read):
        """``read(response)`` of one GetObject, asked again when its body is cut mid-way: botocore's
        retries end with the answer's head, so a body lost to a reset would otherwise fail the whole
        pull (one log line per cut, as for a retried request; the client's attempts in all)."""
        attempts = (self.client.meta.config.retries or {}).get("total_max_attempts", 2)
        for attempt in range(1, attempts + 1):
            r = self.client.get_object(Bucket=self.url.bucket, Key=key)
            try:
                return read(r)
            except bex.ResponseStreamingError as err:
                then = "retrying" if attempt < attempts else "giving up"
                LOG.warning("s3: GetObject body %d of %d cut (%s); %s", attempt, attempts, type(err).__name__, then)
                if attempt == attempts:
                    raise

    def get_head(self) -> Head | None:
        def get():
            return self._body(self.url.key(HEAD_NAME), lambda r: Head(r["Body"].read(), r["ETag"]))

        return self._call("reading HEAD.json", get, missing=None)

    def put_head(self, body: bytes, if_match: str | None) -> str:
        cond = {"IfMatch": if_match} if if_match is not None else {"IfNoneMatch": "*"}
        return self._call(
            "writing HEAD.json",
            lambda: self.client.put_object(
                Bucket=self.url.bucket, Key=self.url.key(HEAD_NAME), Body=body, ContentType="application/json", **cond
            )["ETag"],
            race=True,
            race_on_missing=if_match is not None,
        )

    def has_snapshot(self, sha: str) -> bool:
        return self._call(
            "checking a snapshot",
            lambda: self.client.head_object(Bucket=self.url.bucket, Key=self.url.key(snapshot_name(sha))) is not None,
            missing=False,
        )

    def put_snapshot(self, sha: str, src: Path, progress: ProgressFactory | None = None) -> bool:
        if self.has_snapshot(sha):
            return False
        size = Path(src).stat().st_size

        def upload() -> bool:
            if progress is None:
                self._upload(src, sha, None)
            else:
                with progress("upload", size) as bar:
                    self._upload(src, sha, bar.advance)
            return True

        return self._call("uploading the snapshot", upload)

    def _upload(self, src: Path, sha: str, callback) -> None:
        self.client.upload_file(
            str(src),
            self.url.bucket,
            self.url.key(snapshot_name(sha)),
            ExtraArgs={"ContentType": "application/vnd.sqlite3"},
            Config=self.transfer,
            Callback=callback,
        )

    def get_snapshot(self, sha: str, dest: Path, progress: ProgressFactory | None = None) -> int:
        key = self.url.key(snapshot_name(sha))

        def download() -> None:
            if progress is None:
                self.client.download_file(self.url.bucket, key, str(dest), Config=self.transfer)
            else:
                size = self.client.head_object(Bucket=self.url.bucket, Key=key)["ContentLength"]
                with progress("download", size) as bar:
                    self.client.download_file(
                        self.url.bucket, key, str(dest), Config=self.transfer, Callback=bar.advance
                    )

        def missing():
            raise RemoteError(f"remote {self.url}: HEAD names snapshot {sha[:12]}… but it is missing")

        self._call("downloading the snapshot", download, missing=missing)
        return Path(dest).stat().st_size

    def list_snapshots(self) -> list[SnapshotInfo]:
        prefix = self.url.key(SNAPSHOT_DIR + "/")

        def listing() -> list[SnapshotInfo]:
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.url.bucket, Prefix=prefix)
            objects = [obj for page in pages for obj in page.get("Contents", [])]
            return listed((o["Key"][len(prefix) :], int(o["Size"]), o["LastModified"].timestamp()) for o in objects)

        return self._call("listing snapshots", listing)

    def delete_snapshot(self, sha: str) -> None:
        self._call(
            "deleting a snapshot",
            lambda: self.client.delete_object(Bucket=self.url.bucket, Key=self.url.key(snapshot_name(sha))),
        )

    def put_file(self, name: str, src: Path, content_type: str) -> None:
        key = self.url.key(file_name(name))
        self._call(
            f"uploading {name}",
            lambda: self.client.upload_file(
                str(src), self.url.bucket, key, ExtraArgs={"ContentType": content_type}, Config=self.transfer
            ),
        )

    def get_file(self, name: str, limit: int) -> bytes | None:
        def get():
            return self._body(
                self.url.key(file_name(name)), lambda r: bounded(self.url, name, r["Body"].read(limit + 1), limit)
            )

        return self._call(f"reading {name}", get, missing=None)


BACKEND = S3Backend  # the plug-in this module is (``tilelib.plugins``)
