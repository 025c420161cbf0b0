"""Durations, seeded delay distributions and working hours: the calendar arithmetic triggers need.

The world keeps UTC; a person's working day is wall-clock time in their zone, so opening times are computed
in local time with `zoneinfo` (DST included) and converted back to UTC. Draws from a distribution are seeded
per (world seed, trigger id, firing index), so a rerun, a restore or a fork sees the same firing times.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from functools import cached_property
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_UNITS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_SHORT = re.compile(r"^(?:(\d+(?:\.\d+)?)d)?(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$")
_ISO = re.compile(r"^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$")
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def duration_seconds(value: Any, field: str = "duration") -> float:
    """Seconds from a number, `1h30m`/`90s`/`2d`, or ISO 8601 `PT1H30M`; a ValueError names the field."""
    if isinstance(value, bool):
        raise ValueError(f"{field}: {value!r} is not a duration (give seconds, `2h`, `30m` or `PT2H`)")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    match = _SHORT.match(text.lower()) or _ISO.match(text.upper())
    if not text or text.upper() in ("P", "PT") or match is None or not any(match.groups()):
        raise ValueError(f"{field}: {value!r} is not a duration (give seconds, `2h`, `30m`, `1h30m` or `PT2H`)")
    return sum(float(part) * unit for part, unit in zip(match.groups(), _UNITS.values(), strict=True) if part)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Distribution(_Strict):
    """A seeded random gap between firings: `{dist = "exponential", mean = "2h"}`, `uniform` (`min`, `max`)
    or `normal` (`mean`, `sd`). Every draw is at least `min` (default one second), so time moves on."""

    dist: Literal["exponential", "uniform", "normal"]
    mean: float | str | None = None
    sd: float | str | None = None
    min: float | str = 1.0
    max: float | str | None = None

    @model_validator(mode="after")
    def _complete(self) -> Distribution:
        need = {"exponential": ("mean",), "uniform": ("max",), "normal": ("mean", "sd")}[self.dist]
        for name in need:
            if getattr(self, name) is None:
                raise ValueError(f"a {self.dist} distribution needs `{name}` (a duration such as `2h`)")
        for name in ("mean", "sd", "min", "max"):
            if getattr(self, name) is not None and duration_seconds(getattr(self, name), name) < 0:
                raise ValueError(f"{name}: a duration cannot be negative")
        if self.max is not None and self.seconds("max") < self.seconds("min"):
            raise ValueError("max: must not be below `min`")
        return self

    def seconds(self, name: str) -> float:
        return duration_seconds(getattr(self, name), name)

    @cached_property
    def _parsed(self) -> dict[str, float]:
        """Every given duration in seconds, parsed once (a week of firings draws thousands of times)."""
        return {name: self.seconds(name) for name in ("mean", "sd", "min", "max") if getattr(self, name) is not None}

    def draw(self, rng: random.Random) -> float:
        seconds = self._parsed
        low = max(seconds["min"], 1e-3)
        if self.dist == "exponential":
            value = rng.expovariate(1.0 / max(seconds["mean"], 1e-9))
        elif self.dist == "uniform":
            value = rng.uniform(low, seconds["max"])
        else:
            value = rng.gauss(seconds["mean"], seconds["sd"])
        high = seconds.get("max", value)
        return min(max(value, low), high)


def seeded_rng(seed: int, key: str, index: int) -> random.Random:
    """One generator per draw: the n-th gap of a trigger is the same however the world got there."""
    return random.Random(f"{seed}/{key}/{index}")


class WorkingHours(_Strict):
    """When a person (a persona, a trigger's executor) is at work: `{start, end, time_zone | utc_offset, days}`.

    `start`/`end` are wall-clock `HH:MM` in the zone; an `end` at or before `start` runs past midnight."""

    start: str = Field(description="Opening time, `HH:MM` local.")
    end: str = Field(description="Closing time, `HH:MM` local (before `start`: the shift ends the next day).")
    time_zone: str | None = Field(None, description="IANA zone (DST followed), e.g. Europe/Berlin.")
    utc_offset: str | None = Field(None, description="A fixed offset such as +05:30, instead of a zone.")
    days: list[str] = Field(default_factory=lambda: list(DAYS[:5]), description="Working days: mon … sun.")

    @field_validator("start", "end")
    @classmethod
    def _clock_time(cls, value: str) -> str:
        if not re.fullmatch(r"\d{1,2}:\d{2}", value):
            raise ValueError(f"{value!r} is not a time of day `HH:MM`")
        time.fromisoformat(value.zfill(5))
        return value.zfill(5)

    @field_validator("days")
    @classmethod
    def _days(cls, value: list[str]) -> list[str]:
        days = [d.lower()[:3] for d in value]
        unknown = [d for d, short in zip(value, days, strict=True) if short not in DAYS]
        if unknown or not days:
            raise ValueError(f"{unknown or value!r}: name working days as mon, tue, wed, thu, fri, sat, sun")
        return days

    @model_validator(mode="after")
    def _one_zone(self) -> WorkingHours:
        if self.time_zone is not None and self.utc_offset is not None:
            raise ValueError("give `time_zone` or `utc_offset`, not both")
        self.zone()
        return self

    def zone(self) -> tzinfo:
        if self.utc_offset is not None:
            match = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", self.utc_offset)
            if match is None or int(match[2]) > 23 or int(match[3]) > 59:
                raise ValueError(f"utc_offset: {self.utc_offset!r} is not an offset such as +05:30 or -08:00")
            sign = 1 if match[1] == "+" else -1
            return timezone(sign * timedelta(hours=int(match[2]), minutes=int(match[3])))
        return zone_named(self.time_zone or "UTC", "time_zone")

    @cached_property
    def _wall(self) -> tuple[tzinfo, time, time, frozenset[int]]:
        """(zone, opening, closing, working weekdays as numbers), worked out once."""
        days = frozenset(DAYS.index(day) for day in self.days)
        return self.zone(), time.fromisoformat(self.start), time.fromisoformat(self.end), days

    def _shifts(self, around: datetime) -> Iterator[tuple[datetime, datetime]]:
        """Shifts (UTC open, close) from the day before `around`, over nine days, in order (made as asked for)."""
        zone, start, end, days = self._wall
        first = around.astimezone(zone).date() - timedelta(days=1)
        for n in range(9):
            day = first + timedelta(days=n)
            if day.weekday() in days:
                close_day = day if end > start else day + timedelta(days=1)
                yield _utc(day, start, zone), _utc(close_day, end, zone)

    def is_open(self, at: datetime) -> bool:
        return any(opens <= at < closes for opens, closes in self._shifts(at))

    def next_open(self, at: datetime) -> datetime:
        """`at` itself when at work, else the next opening (UTC)."""
        for opens, closes in self._shifts(at):
            if opens <= at < closes:
                return at
            if opens > at:
                return opens
        raise ValueError("working hours never open")  # unreachable: days is non-empty, nine days cover a week


def _utc(day: date, wall: time, zone: tzinfo) -> datetime:
    """A wall-clock time in `zone` as UTC. A time the spring change skips maps forward (02:30 → 03:30 CEST);
    one the autumn change repeats is its first occurrence."""
    return datetime.combine(day, wall, zone).astimezone(UTC)


def zone_named(name: str, field: str = "time_zone") -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{field}: {name!r} is not an IANA time zone (e.g. Europe/Berlin, America/New_York)") from None
