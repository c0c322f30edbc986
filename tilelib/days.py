"""Days and seed commitments: the one parser of an ISO day and the one definition of ``seed_commit``
(FORMAT §9), shared by the daily build, the manifest parser, the referee and the service."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from typing import Any

from tilelib.errors import BadInput

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def check_day(day: Any, what: str = "date") -> str:
    """``day`` as an ISO date YYYY-MM-DD that exists on the calendar; BadInput naming ``what``."""
    if not isinstance(day, str) or not _DAY.fullmatch(day):
        raise BadInput(f"{what} must be an ISO date YYYY-MM-DD, got {day!r}")
    try:
        dt.date.fromisoformat(day)
    except ValueError:
        raise BadInput(f"{what} {day!r} is not a calendar date") from None
    return day


def today() -> str:
    """Today's ISO date, UTC."""
    return dt.datetime.now(dt.UTC).date().isoformat()


def seed_commit(seed: bytes) -> str:
    """FORMAT §9: sha256 over the 32 raw seed bytes, lower-case hex."""
    return hashlib.sha256(bytes(seed)).hexdigest()


__all__ = ["check_day", "seed_commit", "today"]
