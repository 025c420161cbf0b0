"""The virtual clock every app and the agent share.

Modes: `scaled` (virtual time runs at `rate` × real time), `frozen` (time moves only when told) and
`event` (like frozen, but the world jumps straight to the next scheduled trigger when asked to idle, so a
simulated week takes milliseconds). UTC inside; `timezone` is for presentation only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

ClockMode = Literal["scaled", "frozen", "event"]
MAX_RATE = 1_000_000.0
END_OF_TIME = datetime.max.replace(tzinfo=UTC)
"""The last representable instant: a running clock that reaches it stops there instead of failing every call
(an explicit jump past it is refused: `World.advance`)."""
START_OF_TIME = datetime.min.replace(tzinfo=UTC)
CALENDAR_SECONDS = (datetime.max - datetime.min).total_seconds()
"""Years 1 to 9999 in seconds: a task that advances a clock further ends at END_OF_TIME from any start."""


def shifted(when: datetime, seconds: float) -> datetime:
    """`when` moved by `seconds`, clamped to the representable range (a scaled clock can run past year 9999)."""
    if seconds != seconds:  # NaN
        raise ValueError(f"seconds: {seconds} is not a number")
    try:
        return when + timedelta(seconds=seconds)
    except OverflowError:
        return END_OF_TIME if seconds > 0 else START_OF_TIME


def parse_time(value: str | datetime, *, field: str = "start") -> datetime:
    """An aware UTC datetime from ISO 8601 text; naive times are taken as UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError(f"{field}: {value!r} is not an ISO 8601 time (e.g. 2026-03-02T09:00:00Z)") from exc
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before the first representable UTC instant
        raise ValueError(
            f"{field}: {value.isoformat()} falls outside years 1 to 9999 once converted to UTC; give a time inside them"
        ) from None


class VirtualClock:
    """Unarmed, it reads real UTC time. `set()` arms it; armed, it reads virtual time."""

    def __init__(self, real: Callable[[], float] = time.monotonic) -> None:
        self._real = real
        self.armed = False
        self.mode: ClockMode = "frozen"
        self.rate = 1.0
        self.timezone = "UTC"
        self._base = datetime(1970, 1, 1, tzinfo=UTC)
        self._real_base = 0.0

    def set(
        self,
        start: str | datetime | None = None,
        *,
        mode: ClockMode | None = None,
        rate: float | None = None,
        timezone: str | None = None,
    ) -> None:
        """Arm the clock. Omitted fields keep their value (start defaults to the current reading)."""
        if rate is not None and not 0 <= rate <= MAX_RATE:
            raise ValueError(
                f"rate: {rate} must be ≥ 0 (0 freezes the clock) and ≤ {MAX_RATE:,.0f} virtual seconds per real second"
            )
        if rate == 0:  # the reference protocol's way of saying frozen
            mode = "frozen"
        if timezone is not None:
            try:
                ZoneInfo(timezone)
            except (ZoneInfoNotFoundError, ValueError) as exc:
                raise ValueError(f"timezone: {timezone!r} is not an IANA time zone (e.g. Europe/Berlin)") from exc
            self.timezone = timezone
        base = parse_time(start) if start is not None else self.now()
        self.mode = mode or self.mode
        self.rate = rate if rate is not None else self.rate
        self._base, self._real_base, self.armed = base, self._real(), True

    def clear(self) -> None:
        """Disarm: back to real time."""
        self.armed = False

    def now(self) -> datetime:
        if not self.armed:
            return datetime.now(UTC)
        if self.mode == "scaled":
            return shifted(self._base, (self._real() - self._real_base) * self.rate)
        return self._base

    def advance_to(self, when: datetime) -> None:
        """Move virtual time forward to `when` (never backwards)."""
        if not self.armed:
            raise RuntimeError("the clock is not armed: set it first (sync_env_clock or clock.set)")
        current = self.now()
        if when > current:
            self._base, self._real_base = when, self._real()
        elif self.mode == "scaled":
            self._base, self._real_base = current, self._real()

    def local(self, when: datetime | None = None) -> datetime:
        moment = when or self.now()
        try:
            return moment.astimezone(ZoneInfo(self.timezone))
        except OverflowError:  # the zone's offset would leave the representable range: show UTC
            return moment

    def state(self) -> dict[str, Any]:
        return {
            "armed": self.armed,
            "mode": self.mode,
            "rate": self.rate,
            "timezone": self.timezone,
            "now": self.now().isoformat() if self.armed else None,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        if state["armed"]:
            self.set(state["now"], mode=state["mode"], rate=state["rate"], timezone=state["timezone"])
        else:
            self.armed = False
