"""The S3 back end against a real moto server on loopback: conditional writes, multipart, and failures.

Failures go through the CLI (``tiles_cli.app.main``) so the test sees what a
user sees: one stderr line, exit code 4 (RemoteError), local file untouched.
"""

from __future__ import annotations

import hashlib
import os

import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber
from cli_support import run_tiles
from remote_support import file_digest, make_library, tile_hashes
from s3_server import auth_server, bucket, client, closed_port, moto, remote_url, s3_env, set_s3_env  # noqa: F401

from remote.backend import LostRace, open_backend
from remote.s3 import S3Backend, make_client
from remote.url import parse_remote


def run_cli(argv) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``tiles ARGV`` in the environment the test set up."""
    r = run_tiles(*argv, inherit=True)
    return r.returncode, r.stdout, r.stderr


def test_moto_enforces_conditional_put(bucket, s3_env):
    """The premise of the S3 tests: this moto rejects stale If-Match and If-None-Match on put_object."""
    c = client(s3_env)
    etag = c.put_object(Bucket=bucket, Key="k", Body=b"1", IfNoneMatch="*")["ETag"]
    for cond in ({"IfNoneMatch": "*"}, {"IfMatch": '"0123"'}):
        with pytest.raises(ClientError) as ex:
            c.put_object(Bucket=bucket, Key="k", Body=b"2", **cond)
        assert ex.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    etag2 = c.put_object(Bucket=bucket, Key="k", Body=b"3", IfMatch=etag)["ETag"]
    with pytest.raises(ClientError):
        c.put_object(Bucket=bucket, Key="k", Body=b"4", IfMatch=etag)  # now stale
    assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"3" and etag2 != etag


def test_backend_head_cas(bucket, s3_env):
    b = open_backend(f"s3://{bucket}/x/y")
    assert b.get_head() is None
    e1 = b.put_head(b"one", None)
    with pytest.raises(LostRace):
        b.put_head(b"two", None)
    with pytest.raises(LostRace):
        b.put_head(b"two", '"stale"')
    e2 = b.put_head(b"two", e1)
    assert b.get_head().body == b"two" and b.get_head().etag == e2
    keys = [o["Key"] for o in client(s3_env).list_objects_v2(Bucket=bucket)["Contents"]]
    assert keys == ["x/y/HEAD.json"]


@pytest.mark.parametrize("code,status", [("ConditionalRequestConflict", 409), ("PreconditionFailed", 412)])
def test_409_and_412_both_mean_lost_race(code, status, s3_env):
    """R2 answers 409 ConditionalRequestConflict to a conditional write racing another; moto never does,
    so botocore's Stubber supplies that response here."""
    c = make_client()
    b = S3Backend(parse_remote("s3://some-bucket/p"), client=c)
    with Stubber(c) as stub:
        stub.add_client_error("put_object", service_error_code=code, http_status_code=status)
        with pytest.raises(LostRace):
            b.put_head(b"{}", '"e"')
        stub.add_client_error("put_object", service_error_code="InternalError", http_status_code=500)
        with pytest.raises(Exception) as ex:
            b.put_head(b"{}", '"e"')
        assert not isinstance(ex.value, LostRace)


def test_multipart_snapshot_roundtrip(bucket, s3_env, tmp_path):
    src = tmp_path / "big.bin"
    src.write_bytes(os.urandom(12 * 2**20 + 123))
    sha = hashlib.sha256(src.read_bytes()).hexdigest()
    b = S3Backend(parse_remote(f"s3://{bucket}/p"), multipart_threshold=5 * 2**20, multipart_chunksize=5 * 2**20)
    assert b.put_snapshot(sha, src) is True
    assert b.put_snapshot(sha, src) is False  # immutable: never re-uploaded
    etag = client(s3_env).head_object(Bucket=bucket, Key=f"p/snapshots/{sha}.sqlite")["ETag"]
    assert etag.strip('"').endswith("-3")  # three parts: it went multipart
    dest = tmp_path / "back.bin"
    assert b.get_snapshot(sha, dest) == src.stat().st_size
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == sha
    assert [s.sha for s in b.list_snapshots()] == [sha]


def test_cli_push_pull_summary_lines(remote_url, tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    ha = make_library(a, 1, 12)
    code, out, err = run_cli(["library", "push", "-L", str(a), "--remote", remote_url])
    assert code == 0, err
    assert out.startswith("pushed 12 new tiles, snapshot ") and " MB in " in out and out.endswith(" s\n")
    code, out, _ = run_cli(["library", "push", "-L", str(a), "--remote", remote_url])
    assert code == 0 and out.startswith("nothing to push")
    code, out, _ = run_cli(["library", "pull", "-L", str(b), "--remote", remote_url])
    assert code == 0 and out.startswith("cloned 12 new tiles") and tile_hashes(b) == ha
    code, out, _ = run_cli(["library", "snapshots", "--remote", remote_url])
    assert code == 0 and out.count("HEAD") == 1 and out.endswith("1 snapshot(s), 0.1 MB\n")


def test_cli_reads_tiles_remote_from_env(tmp_path, monkeypatch):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 2)
    monkeypatch.setenv("TILES_REMOTE", f"file://{tmp_path / 'r'}")
    monkeypatch.setenv("TILES_LIBRARY", str(a))
    code, out, _ = run_cli(["library", "push"])
    assert code == 0 and out.startswith("pushed 2 new tiles")
    monkeypatch.delenv("TILES_REMOTE")
    code, _, err = run_cli(["library", "push"])
    assert code == 2 and "no remote given" in err


def _assert_one_line_failure(argv, local, pattern):
    before = file_digest(local)
    code, out, err = run_cli(argv)
    assert code == 4, err
    assert out == "" and err.count("\n") == 1 and err.startswith("tiles: error: "), err
    assert pattern in err, err
    assert file_digest(local) == before


@pytest.mark.parametrize("cmd", ["push", "pull"])
def test_unreachable_endpoint(cmd, tmp_path, monkeypatch):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 3)
    set_s3_env(monkeypatch, f"http://127.0.0.1:{closed_port()}")
    _assert_one_line_failure(
        ["library", cmd, "-L", str(a), "--remote", "s3://bucket-x/p"], a, "cannot reach http://127.0.0.1:"
    )


@pytest.mark.parametrize("cmd", ["push", "pull"])
def test_missing_bucket(cmd, s3_env, tmp_path):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 3)
    _assert_one_line_failure(
        ["library", cmd, "-L", str(a), "--remote", "s3://no-such-bucket-here/p"],
        a,
        "bucket 'no-such-bucket-here' does not exist",
    )


def test_wrong_credentials_refused_right_ones_work(auth_server, tmp_path, monkeypatch):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 3)
    client(auth_server.endpoint, auth_server.key, auth_server.secret).create_bucket(Bucket="authed")
    url = "s3://authed/lib"
    for cmd in ("push", "pull"):
        set_s3_env(monkeypatch, auth_server.endpoint, "AKIAWRONGWRONGWRONG0", "wrong-secret")
        _assert_one_line_failure(["library", cmd, "-L", str(a), "--remote", url], a, "access denied")
    set_s3_env(monkeypatch, auth_server.endpoint, auth_server.key, "not-the-secret")
    _assert_one_line_failure(["library", "push", "-L", str(a), "--remote", url], a, "access denied")
    set_s3_env(monkeypatch, auth_server.endpoint, auth_server.key, auth_server.secret)
    code, out, err = run_cli(["library", "push", "-L", str(a), "--remote", url])
    assert code == 0 and out.startswith("pushed 3 new tiles"), err


def test_cli_refuses_bad_remote_urls_before_any_io(tmp_path):
    a = tmp_path / "a.sqlite"
    make_library(a, 1, 1)
    code, _, err = run_cli(["library", "push", "-L", str(a), "--remote", "ftp://example.invalid/x"])
    assert code == 2 and "must start with s3://, file:/// or https://" in err
    code, _, err = run_cli(["library", "push", "-L", str(a), "--remote", "http://example.invalid/x"])
    assert code == 2 and "use https://" in err


@pytest.mark.slow
def test_eight_cli_pushers_in_separate_processes_all_exit_0(bucket, s3_env, tmp_path):
    """FORMAT §11 end to end: eight `tiles library push` processes at once, disjoint rows, nothing lost."""
    import subprocess
    import sys

    from remote.backend import open_backend

    url = f"s3://{bucket}/lib"
    expected = set()
    paths = [tmp_path / f"p{i}.sqlite" for i in range(8)]
    for i, p in enumerate(paths):
        expected |= make_library(p, 200 + i, 5)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tiles_cli.app", "library", "push", "-L", str(p), "--remote", url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ),
        )
        for p in paths
    ]
    outs = [(pr.wait(180), *pr.communicate()) for pr in procs]
    assert all(code == 0 for code, _, _ in outs), [err.decode() for _, _, err in outs]
    assert all(out.decode().startswith("pushed ") for _, out, _ in outs)
    dest = tmp_path / "final.sqlite"
    r = __import__("remote.sync", fromlist=["pull"]).pull(dest, open_backend(url))
    assert r.status == "cloned" and tile_hashes(dest) == expected and len(expected) == 40
