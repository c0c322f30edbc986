"""Days as they come: a day built into the library while `tiles referee serve` runs is listed and
playable within a minute, no restart; and SIGTERM ends the service promptly even with a client's
keep-alive connection open."""

from __future__ import annotations

import json
import signal
import time

import httpx
import pytest
from cli_support import run_tiles
from serve_support import service_process

from daily.build import BuildOptions, build

SEED = bytes.fromhex("ce" * 32)


def days(base: str) -> list[str]:
    return [d["day"] for d in httpx.get(f"{base}/api/v1/days", timeout=10).json()]


@pytest.mark.slow
def test_a_day_built_while_serving_is_offered_without_a_restart_and_sigterm_is_prompt(tmp_path):
    lib = tmp_path / "lib.sqlite"
    build(BuildOptions(day="2026-11-28", library=lib, out_dir=tmp_path, size=61, seed=SEED), log=lambda _l: None)
    with service_process(lib, tmp_path / "runs.sqlite", []) as (proc, base):  # default --poll 10 s
        assert days(base) == ["2026-11-28"]
        t0 = time.monotonic()
        build(BuildOptions(day="2026-11-29", library=lib, out_dir=tmp_path, size=61, seed=SEED), log=lambda _l: None)
        while "2026-11-29" not in days(base):
            assert time.monotonic() - t0 < 120, "the new day was never offered"  # a guard, not the claim
            time.sleep(0.5)
        r = run_tiles("play", "--url", base, "--day", "2026-11-29", "-q", process=True)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout.splitlines()[-1])["cleared"] is True

        keep = httpx.Client(base_url=base)  # an idle keep-alive connection stays open
        assert keep.get("/api/v1/days").status_code == 200
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)  # a guard against a hang: the idle connection must not hold it open
        keep.close()
        assert rc == 0, rc
    log = (tmp_path / "runs.log").read_text()
    assert "2026-11-29: G=61" in log and "now on offer" in log


def test_work_off_the_loop_hands_back_its_result_or_its_error():
    import asyncio

    from referee.service.watch import _off_loop

    assert asyncio.run(_off_loop(lambda a, b: a + b, 2, 3)) == 5

    def fails():
        raise ValueError("bad manifest")

    with pytest.raises(ValueError, match="bad manifest"):
        asyncio.run(_off_loop(fails))
