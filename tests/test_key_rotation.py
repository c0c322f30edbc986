"""Rotating the daily key (FORMAT §9, "Rotating the key"; issue 74): a keyring of dated keys gives
each day the key in effect on it, so a rotation leaves every earlier day's seed, reveal and
commitment as they were; a malformed keyring is one line that never shows a key (exit 2); the CLI
reveals across a rotation."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daily.seed import KEYRING, day_seed, key_of, keyring
from tilelib.errors import BadInput


def _hmac(key: str, day: str) -> bytes:
    return hmac.new(key.encode(), f"tiles-daily:{day}".encode(), hashlib.sha256).digest()


RING = f"{KEYRING}\n2026-01-01 first key\n# rotated after a leak\n2026-06-15 second\n\n2027-01-01 third\n"


def test_each_day_takes_the_key_in_effect_on_it():
    assert keyring(RING) == (("2026-01-01", "first key"), ("2026-06-15", "second"), ("2027-01-01", "third"))
    assert [key_of(RING, d) for d in ("2026-01-01", "2026-06-14", "2026-06-15", "2026-12-31", "2030-01-01")] == [
        "first key", "first key", "second", "second", "third",
    ]  # fmt: skip
    assert day_seed(RING, "2026-06-14") == _hmac("first key", "2026-06-14") == day_seed("first key", "2026-06-14")
    assert day_seed(RING, "2026-07-01") == _hmac("second", "2026-07-01")


@given(st.lists(st.dates(dt.date(2020, 1, 1), dt.date(2040, 12, 31)), min_size=1, max_size=6, unique=True), st.dates())
def test_a_rotation_never_changes_an_earlier_days_seed(dates, day):
    dates = sorted(d.isoformat() for d in dates)
    ring = KEYRING + "".join(f"\n{d} key-{k}" for k, d in enumerate(dates))
    rotation = f"{int(dates[-1][:4]) + 1}-01-01"  # a new key from a date after every one so far
    rotated = ring + f"\n{rotation} new"
    d = day.isoformat()
    if d < dates[0]:
        with pytest.raises(BadInput, match="no key for"):
            day_seed(rotated, d)
    elif d < rotation:
        assert day_seed(rotated, d) == day_seed(ring, d)
    else:
        assert day_seed(rotated, d) == _hmac("new", d) != day_seed(ring, d)


def test_a_plain_key_is_the_key_as_before():
    assert key_of("tiles-keyring v1 is not the first line here", "2026-01-01").startswith("tiles-keyring")
    assert day_seed("k", "2026-11-29").hex() == "487ed142a977a60593d9c036f3f0b44cd1f781f372153d078fb54bc8f63bcc75"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{KEYRING}\n", "holds no key"),
        (f"{KEYRING}\nhunter2-is-my-key", "line 2 does not start with an ISO date"),
        (f"{KEYRING}\n2026-02-30 k", "line 2 does not start with an ISO date"),
        (f"{KEYRING}\n2026-01-01", "no key after the date 2026-01-01"),
        (f"{KEYRING}\n2026-01-01 a\n2026-01-01 b", "line 3: 2026-01-01 is not after 2026-01-01"),
        (f"{KEYRING}\n2026-03-01 a\n2026-01-01 b", "line 3: 2026-01-01 is not after 2026-03-01"),
    ],
)
def test_a_bad_keyring_is_one_line_that_shows_no_key(text, message):
    with pytest.raises(BadInput, match=message) as err:
        day_seed(text, "2026-06-01")
    assert "hunter2" not in str(err.value)


def test_reveal_across_a_rotation(tmp_path):
    ring = tmp_path / "key"
    ring.write_text(f"{KEYRING}\n2026-01-01 old\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}

    def reveal(day: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "tiles_cli.app", "daily", "reveal", "--date", day, "--secret-file", str(ring)]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env)

    before = reveal("2026-03-01").stdout.strip()
    assert before == _hmac("old", "2026-03-01").hex()
    ring.write_text(f"{KEYRING}\n2026-01-01 old\n2026-04-01 new\n")  # the rotation
    assert reveal("2026-03-01").stdout.strip() == before  # the earlier day's seed, unchanged
    assert reveal("2026-05-01").stdout.strip() == _hmac("new", "2026-05-01").hex()
    bad = reveal("2025-12-31")
    assert bad.returncode == 2 and "no key for 2025-12-31" in bad.stderr and "old" not in bad.stderr
