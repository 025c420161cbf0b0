"""Slack-style `ts` ids ("1764072000.000100": epoch seconds and microseconds) and ISO times.

A `ts` is fixed width (10 + 1 + 6 characters), so string order is time order.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

TS_PATTERN = r"^\d{10}\.\d{6}$"
_TS = re.compile(TS_PATTERN)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def to_micros(moment: datetime) -> int:
    """Microseconds since the epoch; a naive datetime is taken as UTC (the world clock is UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MICRO


def micros_to_ts(micros: int) -> str:
    seconds, micro = divmod(micros, 1_000_000)
    return f"{seconds:010d}.{micro:06d}"


def ts_to_micros(ts: str) -> int:
    if not _TS.match(ts):
        raise ValueError(f"not a message ts: {ts!r} (expected like 1764072000.000100)")
    seconds, micro = ts.split(".")
    return int(seconds) * 1_000_000 + int(micro)


def iso(moment: datetime) -> str:
    """ISO 8601 UTC to the second with a trailing Z, the format of every time this app shows."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ts_to_iso(ts: str) -> str:
    return iso(_EPOCH + ts_to_micros(ts) * _MICRO)


def next_ts(now: datetime, latest: str | None) -> str:
    """The ts of a new message: the clock's time, nudged past the latest ts so ids stay unique and ordered."""
    micros = to_micros(now)
    if latest is not None:
        micros = max(micros, ts_to_micros(latest) + 1)
    return micros_to_ts(micros)
