"""Publishing a finished day (issue 31; FORMAT §11, "The public mirror"): `tiles daily publish-bundle`
puts the day's bundle, manifest and seed — and nothing of the stock — on a public mirror (file://
and a real S3 server on loopback), which a verifier then reads over plain HTTP from a static file
server and checks with both verifiers. A day not over, a mirror that is the library's remote or
holds a library, and a read-only mirror are refused with one line, exit 2, nothing uploaded."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import independent_verifier as iv
import pytest
from cli_support import run_tiles
from s3_server import DUMMY_KEY, DUMMY_SECRET, REGION, client, free_port, moto_endpoint, new_bucket

SECRET = "publish-secret"
DAY1, DAY2 = "2026-10-01", "2026-10-02"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("publish")
    lib, out, private = root / "lib.sqlite", root / "out", f"file://{root / 'private'}"
    (root / "private").mkdir()
    for day in (DAY1, DAY2):
        r = run_tiles(
            "daily",
            "build",
            "--date",
            day,
            "--size",
            "61",
            "--library",
            lib,
            "--out",
            out,
            env={"TILES_SECRET": SECRET, "TILES_REMOTE": private},
        )
        assert r.returncode == 0, r.stderr[-2000:]
    assert (root / "private" / "HEAD.json").is_file()
    return {"root": root, "lib": lib, "out": out, "private": private}


def _publish(built, day: str, to: str, **env) -> subprocess.CompletedProcess:
    return run_tiles(
        "daily",
        "publish-bundle",
        "--date",
        day,
        "--to",
        to,
        "--library",
        built["lib"],
        env={"TILES_SECRET": SECRET, "TILES_REMOTE": built["private"], **env},
    )


def _verify_both(manifest: Path, bundle: Path, seed: str) -> None:
    r = run_tiles("referee", "verify", manifest, "--seed", seed, "--library", bundle)
    assert r.returncode == 0 and r.stdout.strip().endswith("seed ok, from its bundle"), r.stdout + r.stderr
    assert iv.verify(manifest.read_text(), str(bundle), bytes.fromhex(seed))["bundle"] is True


def test_a_file_mirror_gets_the_days_files_only_and_serves_them_to_a_verifier(built, tmp_path):
    pub = tmp_path / "public"
    for day in (DAY1, DAY2, DAY2):  # publishing again replaces, never duplicates
        r = _publish(built, day, f"file://{pub}")
        assert r.returncode == 0 and r.stdout.startswith(f"published {day} to file://{pub}: "), r.stderr
    files = sorted(str(p.relative_to(pub)) for p in pub.rglob("*") if p.is_file())
    assert files == sorted(
        ["days/index.json"] + [f"days/{d}.{x}" for d in (DAY1, DAY2) for x in ("json", "bundle.sqlite", "seed")]
    ), files
    index = json.loads((pub / "days" / "index.json").read_text())
    assert index["format"] == "tiles-days/1" and [e["day"] for e in index["days"]] == [DAY1, DAY2]
    assert (pub / "days" / f"{DAY2}.json").read_text() == (built["out"] / f"{DAY2}.json").read_text()
    reveal = run_tiles("daily", "reveal", "--date", DAY2, env={"TILES_SECRET": SECRET}).stdout
    assert (pub / "days" / f"{DAY2}.seed").read_text() == reveal

    # a verifier reads the mirror over plain HTTP from a static file server, as from a public bucket
    port = free_port()
    srv = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(pub)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                idx = json.loads(urllib.request.urlopen(f"{base}/days/index.json", timeout=2).read())
                break
            except OSError:
                assert time.monotonic() < deadline, "the static server did not start"
                time.sleep(0.1)
        entry = next(e for e in idx["days"] if e["day"] == DAY2)
        got = {}
        for key in ("manifest", "bundle", "seed"):
            got[key] = tmp_path / Path(entry[key]).name
            got[key].write_bytes(urllib.request.urlopen(f"{base}/{entry[key]}", timeout=5).read())
        import hashlib

        assert hashlib.sha256(got["bundle"].read_bytes()).hexdigest() == entry["bundle_sha256"]
        _verify_both(got["manifest"], got["bundle"], got["seed"].read_text().strip())
        # the project's own https:// reader of plain files (http:// on loopback) reads the same bytes
        from remote.backend import open_backend
        from tilelib.errors import RemoteError

        mirror = open_backend(base)
        assert mirror.get_file("days/index.json", 1 << 20) == (pub / "days" / "index.json").read_bytes()
        assert mirror.get_file("days/1999-01-01.json", 1 << 20) is None
        with pytest.raises(RemoteError, match="is over 10 bytes"):
            mirror.get_file("days/index.json", 10)
        with pytest.raises(RemoteError, match="read-only"):
            mirror.put_file("days/x.json", got["manifest"], "application/json")
    finally:
        srv.terminate()
        srv.wait(10)


def test_an_s3_mirror_holds_the_days_files_and_no_snapshot(built, tmp_path):
    endpoint = moto_endpoint()
    bucket = new_bucket(endpoint)
    env = {
        "TILES_S3_ENDPOINT": endpoint,
        "AWS_ACCESS_KEY_ID": DUMMY_KEY,
        "AWS_SECRET_ACCESS_KEY": DUMMY_SECRET,
        "AWS_DEFAULT_REGION": REGION,
    }
    r = _publish(built, DAY2, f"s3://{bucket}/pub", **env)
    assert r.returncode == 0, r.stderr
    keys = sorted(o["Key"] for o in client(endpoint).list_objects_v2(Bucket=bucket)["Contents"])
    assert keys == sorted(
        f"pub/days/{x}" for x in ("index.json", f"{DAY2}.json", f"{DAY2}.bundle.sqlite", f"{DAY2}.seed")
    ), keys
    got = {}
    for name in (f"{DAY2}.json", f"{DAY2}.bundle.sqlite", f"{DAY2}.seed"):
        got[name] = tmp_path / name
        client(endpoint).download_file(bucket, f"pub/days/{name}", str(got[name]))
    _verify_both(got[f"{DAY2}.json"], got[f"{DAY2}.bundle.sqlite"], got[f"{DAY2}.seed"].read_text().strip())


def test_what_would_publish_the_stock_or_a_day_not_over_is_refused_and_uploads_nothing(built, tmp_path):
    other = tmp_path / "other-library-remote"
    push = run_tiles("library", "push", "--remote", f"file://{other}", "--library", built["lib"])
    assert push.returncode == 0, push.stderr
    before = sorted(other.rglob("*"))
    today = dt.datetime.now(dt.UTC).date().isoformat()
    cases = [
        (DAY2, built["private"], "is the library's remote"),
        (DAY2, f"file://{other}", "holds a library (HEAD.json)"),
        (DAY2, "https://mirror.example/tiles", "is read-only"),
        (today, f"file://{tmp_path / 'pub'}", "is secret until the day is over"),
        ("2026-09-30", f"file://{tmp_path / 'pub'}", "holds no manifest for 2026-09-30"),
    ]
    for day, to, want in cases:
        r = _publish(built, day, to)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and want in r.stderr, (day, to, r.stderr)
    assert sorted(other.rglob("*")) == before
    assert not (tmp_path / "pub").exists() or not any((tmp_path / "pub").rglob("*.sqlite"))
    r = run_tiles("daily", "publish-bundle", "--date", DAY2, "--library", built["lib"])
    assert r.returncode == 2 and "no public mirror given" in r.stderr, r.stderr
