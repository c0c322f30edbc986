"""The day's seed and its public commitment (FORMAT §9).

``seed = HMAC-SHA256(key=TILES_SECRET as UTF-8, msg="tiles-daily:" + D)`` with D
the ISO date; ``seed_commit = sha256(seed)`` over the 32 raw bytes. The seed is
secret until the day is over (``reveal``); the manifest carries only the
commitment, so anyone can later check the revealed seed against it.

The key may be a **keyring** (FORMAT §9, "Rotating the key"): a first line ``tiles-keyring v1``,
then one line per key, ``FROM KEY``, FROM an ISO date, in increasing order; day D's key is the
one of the last line whose FROM is D or earlier. Rotating the key is adding a line dated after
today: the days before it keep their keys, so their seeds can still be revealed and their boards
stay this operator's.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac

from tilelib.days import check_day, seed_commit  # noqa: F401  (the one definitions; re-exported)
from tilelib.errors import BadInput

SECRET_ENV = "TILES_SECRET"
KEYRING = "tiles-keyring v1"


def keyring(secret: str) -> tuple[tuple[str, str], ...] | None:
    """The keyring's (FROM, KEY) lines in order, or None when ``secret`` is a plain key; BadInput
    naming the first bad line (a date that is not one, a missing key, dates not increasing)."""
    lines = secret.split("\n")
    if lines[0].rstrip("\r") != KEYRING:
        return None
    out: list[tuple[str, str]] = []
    for k, raw in enumerate(lines[1:], start=2):
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        start, _, key = line.partition(" ")
        where = f"the key's keyring, line {k}"
        try:
            check_day(start, where)
        except BadInput:  # the line is not echoed: it may be a key
            raise BadInput(f"{where} does not start with an ISO date YYYY-MM-DD and a space") from None
        if not key.strip():
            raise BadInput(f"{where}: no key after the date {start}")
        if out and start <= out[-1][0]:
            raise BadInput(f"{where}: {start} is not after {out[-1][0]} (lines go from the oldest key up)")
        out.append((start, key))
    if not out:
        raise BadInput(f"the key's keyring holds no key (after {KEYRING!r}: lines 'YYYY-MM-DD KEY')")
    return tuple(out)


def key_of(secret: str, day: str) -> str:
    """Day ``day``'s key: the secret itself, or the keyring's key in effect on that day."""
    ring = keyring(secret)
    if ring is None:
        return secret
    keys = [key for start, key in ring if start <= day]
    if not keys:
        raise BadInput(f"the key's keyring has no key for {day}: its first key is from {ring[0][0]}")
    return keys[-1]


def parse_day(text: str | None, today: dt.date | None = None) -> str:
    """An ISO date string YYYY-MM-DD (default: today, UTC); BadInput if malformed (``tilelib.days``)."""
    if text is None:
        return (today or dt.datetime.now(dt.UTC).date()).isoformat()
    return check_day(text, "--date")


def day_seed(secret: str | None, day: str) -> bytes:
    """The 32-byte seed of a day; BadInput when no secret is configured."""
    if not secret:
        raise BadInput(
            f"no key for the day's seed: set {SECRET_ENV}, pass --secret-file FILE, or run "
            "`tiles init --secret-file FILE` (it makes the file) for this folder's tiles.toml"
        )
    key = key_of(secret, day)
    return hmac.new(key.encode("utf-8"), ("tiles-daily:" + day).encode("utf-8"), hashlib.sha256).digest()


def check_revealable(day: str, today: dt.date | None = None, force: bool = False) -> None:
    """Refuse to reveal the seed of today or a future day (UTC) unless forced."""
    today = today or dt.datetime.now(dt.UTC).date()
    if not force and dt.date.fromisoformat(day) >= today:
        raise BadInput(f"the seed of {day} is secret until the day is over (use --force to override)")
