"""``file:///dir`` remote: the same layout and compare-and-swap semantics as S3, on a local file system.

HEAD swap: take an exclusive ``flock`` on ``<dir>/.lock``, re-read HEAD, compare
its ETag (sha256 of the HEAD.json bytes, quoted like an S3 ETag), write the new
body to a temp file, fsync, ``os.replace`` it over HEAD.json, fsync the
directory. ``flock`` is released by the kernel when a process dies, so a killed
pusher never leaves a stale lock; ``os.replace`` is atomic, so readers (who take
no lock) see the old HEAD or the new one, never a torn file.
Snapshots are written to a temp file and then hard-linked into place, which
fails if the name exists: a snapshot is never overwritten.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from contextlib import contextmanager, nullcontext
from pathlib import Path

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
from tilelib.errors import BadInput, RemoteError, disk_error
from tilelib.fsio import install, no_follow_open

CHUNK = 1 << 20


def etag_of(body: bytes) -> str:
    """The local backend's ETag: sha256 of the HEAD bytes, in quotes like S3's."""
    return '"' + hashlib.sha256(body).hexdigest() + '"'


def copy_with_progress(src: Path, dst_fh, progress: ProgressFactory | None, label: str) -> int:
    """Copy the file ``src`` into the open binary file ``dst_fh`` in 1 MiB chunks; return bytes copied."""
    size = src.stat().st_size
    done = 0
    with progress(label, size) if progress else nullcontext() as bar, open(src, "rb") as fh:
        while chunk := fh.read(CHUNK):
            dst_fh.write(chunk)
            done += len(chunk)
            if bar is not None:
                bar.advance(len(chunk))
    return done


class LocalBackend(Backend):
    def __init__(self, url: RemoteURL) -> None:
        self.url = url
        self.root = Path(url.path)

    # ------------------------------------------------------------ helpers

    def _check_root(self) -> None:
        """The remote's directory exists, and neither of its own names is a symbolic link (``_own``)."""
        if not self.root.is_dir():
            raise RemoteError(f"remote {self.url}: no such directory {self.root}")
        self._own(self.root / SNAPSHOT_DIR)
        self._own(self.root / HEAD_NAME)

    def _own(self, path: Path) -> Path:
        """``path`` under the root, none of the remote's own folders or files on the way to it a symbolic
        link: RemoteError (exit 4) naming it otherwise. A link planted at ``snapshots/`` would make a push
        write outside the remote, and one at a snapshot or ``HEAD.json`` read from outside it. The root
        itself may be a link (a remote kept on another disk)."""
        at = self.root
        for part in path.relative_to(self.root).parts:
            at = at / part
            if at.is_symlink():
                raise RemoteError(
                    f"remote {self.url}: {at.relative_to(self.root)} is a symbolic link; "
                    "refusing to follow it out of the remote"
                )
        return path

    @contextmanager
    def _locked(self):
        try:
            fd = no_follow_open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        except (BadInput, OSError) as err:
            raise RemoteError(f"remote {self.url}: cannot take its lock: {err}") from err
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    def _write_atomic(self, final: Path, write, *, replace: bool) -> bool:
        """Write a temp file in final's directory with ``write(fh)``, fsync, then move it into place.

        ``replace=False`` links instead of renaming, so an existing file is kept
        (returns False in that case)."""
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=final.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                write(fh)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                install(Path(tmp), final, replace)
            except FileExistsError:
                return False
            return True
        except OSError as err:
            raise RemoteError(f"remote {self.url}: cannot write {final.name}: {err.strerror or err}") from err
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    # ------------------------------------------------------------ Backend

    def prepare(self) -> None:
        try:
            self._own(self.root / SNAPSHOT_DIR).mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise RemoteError(f"remote {self.url}: cannot create {self.root}: {err.strerror or err}") from err

    def get_head(self) -> Head | None:
        self._check_root()
        try:
            body = self._own(self.root / HEAD_NAME).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            raise RemoteError(f"remote {self.url}: cannot read {HEAD_NAME}: {err.strerror or err}") from err
        return Head(body, etag_of(body))

    def put_head(self, body: bytes, if_match: str | None) -> str:
        self._check_root()
        with self._locked():
            path = self._own(self.root / HEAD_NAME)
            try:
                current = etag_of(path.read_bytes())
            except FileNotFoundError:
                current = None
            if current != if_match:
                raise LostRace(f"remote {self.url}: HEAD changed (expected {if_match}, found {current})")
            self._write_atomic(path, lambda fh: fh.write(body), replace=True)
        return etag_of(body)

    def has_snapshot(self, sha: str) -> bool:
        return self._own(self.root / snapshot_name(sha)).is_file()

    def put_snapshot(self, sha: str, src: Path, progress: ProgressFactory | None = None) -> bool:
        final = self._own(self.root / snapshot_name(sha))
        if final.is_file():
            return False
        return self._write_atomic(
            final, lambda fh: copy_with_progress(Path(src), fh, progress, "upload"), replace=False
        )

    def get_snapshot(self, sha: str, dest: Path, progress: ProgressFactory | None = None) -> int:
        src = self._own(self.root / snapshot_name(sha))
        try:
            with open(dest, "wb") as out:
                return copy_with_progress(src, out, progress, "download")
        except FileNotFoundError:
            # the file's absence is the whole story (other OSErrors keep their cause below)
            raise RemoteError(f"remote {self.url}: HEAD names snapshot {sha[:12]}… but it is missing") from None
        except OSError as err:  # a full local disk is exit 3 (DiskFull), not the remote's fault
            raise disk_error(err) or RemoteError(
                f"remote {self.url}: cannot read snapshot {sha[:12]}…: {err.strerror or err}"
            ) from err

    def list_snapshots(self) -> list[SnapshotInfo]:
        self._check_root()
        d = self._own(self.root / SNAPSHOT_DIR)
        files = [p for p in d.iterdir() if p.is_file()] if d.is_dir() else []
        return listed((p.name, (st := p.stat()).st_size, st.st_mtime) for p in files)

    def delete_snapshot(self, sha: str) -> None:
        try:
            self._own(self.root / snapshot_name(sha)).unlink()
        except FileNotFoundError:
            pass

    def put_file(self, name: str, src: Path, content_type: str) -> None:
        final = self._own(self.root / file_name(name))
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise RemoteError(f"remote {self.url}: cannot create {final.parent}: {err.strerror or err}") from err
        self._write_atomic(final, lambda fh: copy_with_progress(Path(src), fh, None, "upload"), replace=True)
        try:
            final.chmod(0o644)  # a mirror is for reading: a static server runs as another user
        except OSError as err:
            raise RemoteError(f"remote {self.url}: cannot make {name} readable: {err.strerror or err}") from err

    def get_file(self, name: str, limit: int) -> bytes | None:
        try:
            with open(self._own(self.root / file_name(name)), "rb") as fh:
                body = fh.read(limit + 1)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise RemoteError(f"remote {self.url}: cannot read {name}: {err.strerror or err}") from err
        return bounded(self.url, name, body, limit)


BACKEND = LocalBackend  # the plug-in this module is (``tilelib.plugins``)
