"""FORMAT §9 seed derivation, commitment, reveal rules, and the build lock."""

import datetime as dt
import hashlib
import hmac
import multiprocessing

import pytest

from daily.lock import build_lock
from daily.seed import check_revealable, day_seed, parse_day, seed_commit
from tilelib.errors import BadInput, BuildLocked


def test_seed_is_hmac_of_the_date_and_commit_is_its_sha256():
    seed = day_seed("correct horse", "2026-11-29")
    assert seed == hmac.new(b"correct horse", b"tiles-daily:2026-11-29", hashlib.sha256).digest()
    # golden, fixed when the format was fixed
    assert day_seed("k", "2026-11-29").hex() == "487ed142a977a60593d9c036f3f0b44cd1f781f372153d078fb54bc8f63bcc75"
    assert (
        seed_commit(day_seed("k", "2026-11-29")) == "50450a5eeedcc161039a1529c0f6ac41a885164287e441c9a741dd86164ad2ef"
    )
    assert seed_commit(seed) == hashlib.sha256(seed).hexdigest()


def test_secret_is_utf8():
    assert day_seed("clé", "2026-01-01") == hmac.new("clé".encode(), b"tiles-daily:2026-01-01", hashlib.sha256).digest()


def test_missing_secret_and_bad_dates_are_bad_input():
    with pytest.raises(BadInput, match="TILES_SECRET"):
        day_seed(None, "2026-11-29")
    for bad in ("2026-13-01", "29/11/2026", "2026-11-9", ""):
        with pytest.raises(BadInput):
            parse_day(bad)
    assert parse_day(None, today=dt.date(2026, 11, 29)) == "2026-11-29"


def test_reveal_only_after_the_day():
    today = dt.date(2026, 11, 29)
    check_revealable("2026-11-28", today)
    for day in ("2026-11-29", "2026-12-01"):
        with pytest.raises(BadInput, match="secret"):
            check_revealable(day, today)
    check_revealable("2026-11-29", today, force=True)


def _try_lock(path, q):
    try:
        with build_lock(path):
            q.put("got it")
    except BuildLocked as err:
        q.put(str(err))


def test_lock_excludes_a_second_build(tmp_path):
    lib = tmp_path / "lib.sqlite"
    q = multiprocessing.get_context("spawn").Queue()
    with build_lock(lib):
        p = multiprocessing.get_context("spawn").Process(target=_try_lock, args=(lib, q))
        p.start()
        p.join(30)
        assert "another daily build" in q.get(timeout=5)
    # released: a new holder gets it
    p = multiprocessing.get_context("spawn").Process(target=_try_lock, args=(lib, q))
    p.start()
    p.join(30)
    assert q.get(timeout=5) == "got it"
