"""The year of nights, short form (issue 74): ``scripts/bench_year.py`` for 30 nights at a small G,
two hosts, every fault class of the proxy injected, a build killed during its push, every invariant
checked every night (a full disk, a lost library, a rotated key and replays across it included) —
and the proxy itself, whose faults the bench counts on, checked apart."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import boto3
import botocore.exceptions as bex
import pytest
from botocore.config import Config
from s3_server import DUMMY_KEY, DUMMY_SECRET, REGION, client, moto_endpoint, new_bucket

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from fault_proxy import KINDS, FaultProxy  # noqa: E402


def _plain(endpoint: str):
    cfg = Config(retries={"total_max_attempts": 1}, read_timeout=1, connect_timeout=1)
    return boto3.session.Session().client(
        "s3", endpoint_url=endpoint, aws_access_key_id=DUMMY_KEY, aws_secret_access_key=DUMMY_SECRET,
        region_name=REGION, config=cfg,
    )  # fmt: skip


def test_the_proxy_injects_each_kind_in_turn_and_passes_the_rest():
    up = moto_endpoint()
    bucket = new_bucket(up)
    client(up).put_object(Bucket=bucket, Key="k", Body=b"x" * 4000)
    with FaultProxy(up, seed=0, rate=1.0, stall=1.5) as proxy:
        c = _plain(proxy.url)
        seen = []
        for _ in KINDS:
            try:
                c.get_object(Bucket=bucket, Key="k")["Body"].read()
                seen.append("passed")
            except bex.ClientError as err:
                seen.append(err.response["Error"]["Code"])
            except (bex.BotoCoreError, OSError) as err:
                seen.append(type(err).__name__)
        assert dict(proxy.counts) == dict.fromkeys(KINDS, 1)
        assert seen[1:3] == ["InternalError", "SlowDown"]  # the server untouched, an S3 error body
        assert seen[0] in ("ResponseStreamingError", "IncompleteReadError", "ProtocolError")  # cut mid-body
        assert seen[3] == "ReadTimeoutError"  # the stall outlasts the client's timeout
        proxy.armed = False
        assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x" * 4000  # passed through
        assert c.head_object(Bucket=bucket, Key="k")["ContentLength"] == 4000


@pytest.mark.slow
def test_thirty_nights_with_every_fault_keep_every_invariant(tmp_path):
    table = tmp_path / "year.csv"
    args = ["--nights", "30", "--size", "41", "--rate", "0.05", "--stall", "6.5", "--kill-every", "10"]
    args += ["--work", str(tmp_path / "w"), "--csv", str(table)]
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts/bench_year.py"), *args],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert "30 nights at G = 41" in out.stdout and "every invariant held" in out.stdout
    nights = list(csv.DictReader(table.open()))
    assert [int(r["night"]) for r in nights] == list(range(1, 31))
    assert {r["hosts"] for r in nights} == {"a", "b", "a+b"}  # alternate nights, and both at once
    for kind in KINDS:
        assert sum(int(r[kind]) for r in nights) >= 1, kind
    assert sum(int(r["killed"]) for r in nights) >= 2  # a build SIGKILLed in its push, built again
    assert sum(int(r["retries_logged"]) for r in nights) >= 1
    totals = dict(
        line.strip("| ").split(" | ") for line in out.stdout.splitlines() if line.startswith("| ") and "---" not in line
    )
    for event in ("disk full", "library lost", "key rotated", "replays", "weekly prunes"):
        assert int(totals.get(event, 0)) >= 1, (event, totals)
    pruned = [int(m) for m in re.findall(r"weekly \(\w\): pruned (\d+) snapshot", out.stdout)]
    assert len(pruned) == 4 and sum(pruned) >= 1  # old objects went, and the replays after still pass
    assert all(float(r["remote_mb"]) > 0 for r in nights)
    ledger = [int(r["ledger"]) for r in nights]
    assert ledger == sorted(ledger) and ledger[-1] > ledger[0]  # rows pushed, none lost (checked nightly)
    assert [int(r["spent"]) for r in nights] == sorted(int(r["spent"]) for r in nights)


def test_the_nightly_verify_refuses_a_changed_manifest(tmp_path):
    """The invariant that a night's manifest verifies (from the library and from its bundle) can
    fail: a manifest whose first tile is placed under another of its 16 symmetries breaks it,
    naming the day and the host."""
    import bench_year

    from daily.build import BuildOptions, build

    host = bench_year.Host("a", tmp_path / "a")
    day = "2027-01-01"
    build(BuildOptions(day=day, library=host.library, out_dir=host.out, size=21, seed=b"\x01" * 32), log=lambda _: None)
    bench_year.verify_night(host, day)  # as built: it holds
    path = host.out / f"{day}.json"
    text = path.read_text()
    first = text.index('"t":', text.index('"tiles":'))
    t = int(text[first + 4 : text.index("}", first)])
    path.write_text(f"{text[: first + 4]}{(t + 1) % 16}{text[text.index('}', first) :]}")
    with pytest.raises(bench_year.Broken, match=f"{day} host a: its manifest does not verify"):
        bench_year.verify_night(host, day)
    assert not (host.folder / "bundle.sqlite").exists()


def test_the_spent_check_refuses_a_lost_row_and_a_solution_on_two_days(tmp_path):
    import bench_year

    audit = bench_year.Audit(tmp_path)
    day1 = {
        ("s1", "b1", 10, "2027-01-01"),
        ("s2", "b1", 10, "2027-01-01"),
        ("s1", "b2", 10, "2027-01-01"),
    }  # b2 lost a race
    bench_year.check_spent(audit, day1, "2027-01-01")
    assert audit.spent == 3
    with pytest.raises(bench_year.Broken, match="1 spent row.* left the remote's ledger"):
        bench_year.check_spent(audit, day1 - {("s2", "b1", 10, "2027-01-01")}, "2027-01-02")
    with pytest.raises(bench_year.Broken, match="1 solution.* on two days' boards"):
        bench_year.check_spent(audit, day1 | {("s2", "b3", 10, "2027-01-02")}, "2027-01-02")


def _object(path: Path, tiles: list[str], spent: list[tuple]) -> bytes:
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE tiles (hash TEXT PRIMARY KEY)")
        db.execute("CREATE TABLE spent (solution TEXT, board TEXT, n INTEGER, day TEXT)")
        db.executemany("INSERT INTO tiles VALUES (?)", [(t,) for t in tiles])
        db.executemany("INSERT INTO spent VALUES (?, ?, ?, ?)", spent)
    db.close()
    return path.read_bytes()


def test_the_auditor_reads_the_state_head_names_and_proves_each_object(tmp_path):
    """The remote's state is the union of the base and the deltas HEAD names now: a row in a delta
    HEAD dropped is not in it (a merge into the auditor's own library would have kept it), and an
    object whose bytes are not its name is refused."""
    import hashlib
    import json

    import bench_year

    up = moto_endpoint()
    s3 = client(up)
    s3.create_bucket(Bucket=bench_year.BUCKET)
    objs = {}
    for name, tiles, spent in [
        ("base", ["t1", "t2"], [("s1", "b1", 10, "d1")]),
        ("d1", ["t3"], []),
        ("d2", ["t4"], []),
    ]:
        data = _object(tmp_path / f"{name}.sqlite", tiles, spent)
        sha = hashlib.sha256(data).hexdigest()
        s3.put_object(Bucket=bench_year.BUCKET, Key=f"{bench_year.PREFIX}/snapshots/{sha}.sqlite", Body=data)
        objs[name] = sha

    def set_head(deltas):
        doc = {"snapshot": objs["base"], "deltas": [{"sha": objs[d], "size": 0} for d in deltas]}
        s3.put_object(Bucket=bench_year.BUCKET, Key=f"{bench_year.PREFIX}/HEAD.json", Body=json.dumps(doc).encode())

    audit = bench_year.Audit(tmp_path)
    set_head(["d1", "d2"])
    tiles, spent = bench_year.remote_state(audit, s3, "day")
    assert tiles == {"t1", "t2", "t3", "t4"} and spent == {("s1", "b1", 10, "d1")}
    set_head(["d2"])  # a HEAD that lost a delta: its rows are not in the state any more
    tiles, _ = bench_year.remote_state(audit, s3, "day")
    assert tiles == {"t1", "t2", "t4"} and objs["d1"] not in audit.objects
    s3.put_object(Bucket=bench_year.BUCKET, Key=f"{bench_year.PREFIX}/snapshots/{objs['d1']}.sqlite", Body=b"x")
    set_head(["d1"])
    with pytest.raises(bench_year.Broken, match="is not what its name says"):
        bench_year.remote_state(audit, s3, "day")
