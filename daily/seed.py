"""The day's seed and its public commitment (FORMAT §9).

``seed = HMAC-SHA256(key=TILES_SECRET as UTF-8, msg="tiles-daily:" + D)`` with D
the ISO date; ``seed_commit = sha256(seed)`` over the 32 raw bytes. The seed is
secret until the day is over (``reveal``); the manifest carries only the
commitment, so anyone can later check the revealed seed against it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac

from tilelib.days import check_day, seed_commit  # noqa: F401  (the one definitions; re-exported)
from tilelib.errors import BadInput

SECRET_ENV = "TILES_SECRET"


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
    return hmac.new(secret.encode("utf-8"), ("tiles-daily:" + day).encode("utf-8"), hashlib.sha256).digest()


def check_revealable(day: str, today: dt.date | None = None, force: bool = False) -> None:
    """Refuse to reveal the seed of today or a future day (UTC) unless forced."""
    today = today or dt.datetime.now(dt.UTC).date()
    if not force and dt.date.fromisoformat(day) >= today:
        raise BadInput(f"the seed of {day} is secret until the day is over (use --force to override)")
