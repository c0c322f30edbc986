"""What an operator watches (issue 74): every ``tiles daily build`` run, built or not, is one line
of ``LIBRARY.nights``; ``--metrics FILE`` writes the Prometheus text file node_exporter reads (read
back here by prometheus-client's own parser); ``tiles daily status`` says when this host last built,
what failed since, and the remote's last push with the host that made it (HEAD's ``pushed_by``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from daily import nights
from daily.nights import Run


def _run(day: str, code: int, host: str = "h", **kw) -> Run:
    return Run(day=day, host=host, started=f"{day}T00:05:00Z", seconds=12.5, cpu_seconds=20.0, exit=code, **kw)


@given(st.lists(st.sampled_from([0, 0, 3, 4, 5]), max_size=12))
def test_status_is_the_last_build_and_the_failures_after_it(codes):
    runs = [_run(f"2027-01-{k + 1:02d}", c) for k, c in enumerate(codes)]
    s = nights.status(runs)
    oks = [r for r in runs if r.ok]
    assert s.last == (runs[-1] if runs else None)
    assert s.last_ok == (oks[-1] if oks else None)
    after = runs[runs.index(oks[-1]) + 1 :] if oks else runs
    assert list(s.failed_since) == after and all(not r.ok for r in s.failed_since)


def _families(text: str) -> dict:
    return {
        f.name: {tuple(sorted(x.labels.items())): x.value for x in f.samples}
        for f in text_string_to_metric_families(text)
    }


def test_the_metrics_read_back_by_prometheus_own_parser():
    runs = [_run("2027-01-01", 0, host='a "quoted" host', tiles=1200, stock_nights_left=4.5), _run("2027-01-02", 4)]
    got = _families(nights.metrics(runs))
    host = (("host", 'a "quoted" host'),)
    h2 = (("host", "h"),)
    assert got["tiles_daily_last_run_exit_code"] == {h2: 4.0}
    assert got["tiles_daily_failed_runs_since_success"] == {h2: 1.0}
    assert got["tiles_daily_last_success_timestamp_seconds"] == {h2: 1798761900.0 + 12}  # 2027-01-01T00:05Z + 12.5 s
    assert got["tiles_daily_last_run_timestamp_seconds"] == {h2: 1798848300.0}
    assert "tiles_daily_library_tiles" not in got  # the failed run did not count its library: no gauge, not a 0
    only_ok = _families(nights.metrics(runs[:1]))
    assert only_ok["tiles_daily_library_tiles"] == {host: 1200.0} and only_ok["tiles_daily_stock_nights_left"] == {
        host: 4.5
    }
    assert nights.metrics([]) == ""


def test_a_cut_line_in_the_log_is_skipped(tmp_path):
    lib = tmp_path / "t.sqlite"
    assert nights.append(lib, _run("2027-01-01", 0)) and nights.append(lib, _run("2027-01-02", 4))
    with open(nights.log_path(lib), "a") as f:
        f.write('{"day":"2027-01-03","host":"h","star')  # a crash mid-write
    assert [r.day for r in nights.read(lib)] == ["2027-01-01", "2027-01-02"]
    assert nights.read(tmp_path / "none.sqlite") == []


def _tiles(*args: str, cwd: Path, host: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILES_")}
    env.update(TILES_SECRET="nights-test", TILES_HOST=host)
    return subprocess.run(
        [sys.executable, "-m", "tiles_cli.app", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_build_status_and_metrics_through_the_cli(tmp_path):
    remote = tmp_path / "remote"
    remote.mkdir()
    url = f"file://{remote}"
    common = ["--size", "41", "-L", "t.sqlite", "--out", ".", "--metrics", "tiles.prom"]
    ok = _tiles("daily", "build", "--date", "2027-01-01", *common, "--remote", url, cwd=tmp_path, host="host-a")
    assert ok.returncode == 0, ok.stderr
    bad = _tiles(
        "daily", "build", "--date", "2027-01-02", *common, "--remote", url + "-gone", cwd=tmp_path, host="host-a"
    )
    assert bad.returncode == 4
    runs = nights.read(tmp_path / "t.sqlite")
    assert [(r.day, r.exit, r.host) for r in runs] == [("2027-01-01", 0, "host-a"), ("2027-01-02", 4, "host-a")]
    assert runs[0].tiles and runs[0].tiles > 0 and runs[0].library_bytes and runs[0].peak_rss_bytes > 10 << 20
    assert "no such directory" in (runs[1].error or "")
    got = _families((tmp_path / "tiles.prom").read_text())
    assert got["tiles_daily_last_run_exit_code"] == {(("host", "host-a"),): 4.0}

    out = _tiles("daily", "status", "-L", "t.sqlite", "--remote", url, cwd=tmp_path, host="host-b")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("last night built here: 2027-01-01 on host-a")
    assert lines[1] == "failed since: 1 run(s)" and "exit 4: remote" in lines[2]
    assert lines[3].startswith(f"remote {url}: last push ") and lines[3].endswith(" by host-a")
    doc = json.loads(_tiles("daily", "status", "-L", "t.sqlite", "--json", cwd=tmp_path, host="b").stdout)
    assert doc["last_built"]["day"] == "2027-01-01" and [r["exit"] for r in doc["failed_since"]] == [4]
    assert doc["remote"] is None  # no remote asked
    head = json.loads((remote / "HEAD.json").read_text())
    assert head["pushed_by"] == "host-a"


def test_status_reads_a_hostile_head_as_a_pull_does(tmp_path):
    """A HEAD that is not one (a JSON list) is one line and exit 4, as for a pull; a sound HEAD whose
    informative keys hold something other than text names no host and no time."""
    from remote.backend import Head
    from remote.head import provenance

    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "HEAD.json").write_text("[1, 2]\n")
    bad = _tiles("daily", "status", "-L", "t.sqlite", "--remote", f"file://{remote}", cwd=tmp_path, host="h")
    assert bad.returncode == 4 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr, bad.stderr
    assert provenance(Head(b"[1, 2]", '"e"')) == (None, None)
    assert provenance(Head(b"not json", '"e"')) == (None, None)
    assert provenance(Head(b'{"pushed_at": 5, "pushed_by": {"x": 1}}', '"e"')) == (None, None)
    assert provenance(Head(b'{"pushed_at": "2027-01-01T00:00:00Z", "pushed_by": "a"}', '"e"')) == (
        "2027-01-01T00:00:00Z",
        "a",
    )


def test_a_metrics_file_that_cannot_be_written_is_bad_input_before_the_build(tmp_path):
    (tmp_path / "adir").mkdir()
    for target in ("adir", "missing/tiles.prom"):
        out = _tiles("daily", "build", "--size", "41", "-L", "t.sqlite", "--metrics", target, cwd=tmp_path, host="h")
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and "--metrics" in out.stderr, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]  # no library, no log, no manifest
