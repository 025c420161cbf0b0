"""Time zones, working hours (DST both ways), seeded recurrence, delays, barriers, nl executors, verify."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from agentenv_runtime import Env, World, tool
from agentenv_runtime.world.schedule import WorkingHours

BERLIN = ZoneInfo("Europe/Berlin")


class Desk(Env):
    name = "desk"
    schema = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);"

    @tool
    def add(self, body: str) -> dict[str, Any]:
        """Add a note.

        Args:
            body: The text.
        """
        cur = self.db.execute("INSERT INTO notes (body) VALUES (?)", (body,))
        return {"id": cur.lastrowid, "body": body}


def world(seed: int = 0, start: str = "2026-11-23T08:00:00Z") -> World:
    w = World([Desk()], seed=seed, roles={"agent": {"tools": ["*"]}, "boss": {"tools": ["add"]}})
    w.clock.set(start, mode="event")
    return w


def berlin_opening(day: datetime) -> datetime:
    """09:00 Berlin wall time on that local date, computed here with zoneinfo alone."""
    return datetime(day.year, day.month, day.day, 9, tzinfo=BERLIN).astimezone(UTC)


# ---- time zones -----------------------------------------------------------------------------------
def test_get_time_in_a_zone_per_call_and_an_unknown_zone_is_a_tool_error() -> None:
    w = world(start="2026-07-01T12:00:00Z")
    out = w.call("get_time", {"time_zone": "Asia/Kolkata"}, role="agent")
    assert out.ok and out.result["local"] == "2026-07-01T17:30:00+05:30"
    assert w.call("get_time", {}, role="agent").result["timezone"] == "UTC"
    bad = w.call("get_time", {"time_zone": "Mars/Olympus"}, role="agent")
    assert not bad.ok and "Mars/Olympus" in bad.error["message"]


# ---- working hours ----------------------------------------------------------------------------------
def test_berlin_hours_asked_on_saturday_open_monday_0800z() -> None:
    hours = WorkingHours(
        start="09:00", end="17:00", time_zone="Europe/Berlin", days=["mon", "tue", "wed", "thu", "fri"]
    )
    saturday = datetime(2026, 11, 28, 12, tzinfo=UTC)
    expected = berlin_opening(datetime(2026, 11, 30))
    assert expected == datetime(2026, 11, 30, 8, tzinfo=UTC)
    assert not hours.is_open(saturday) and hours.next_open(saturday) == expected


@pytest.mark.parametrize(
    ("saturday", "monday"),
    [((2026, 3, 28), (2026, 3, 30)), ((2026, 10, 24), (2026, 10, 26))],
    ids=["march-spring-forward", "october-fall-back"],
)
def test_dst_changeover_weekends_both_ways(saturday: tuple[int, int, int], monday: tuple[int, int, int]) -> None:
    hours = WorkingHours(start="09:00", end="17:00", time_zone="Europe/Berlin")
    before = datetime(*saturday, 12, tzinfo=UTC)
    opens = hours.next_open(before)
    assert opens == berlin_opening(datetime(*monday))  # zoneinfo's own answer
    friday_close = datetime(*saturday, 17, tzinfo=BERLIN).astimezone(UTC) - timedelta(days=1)
    # the offset changed over the weekend: Friday's close and Monday's open differ in UTC hour
    assert opens.hour != friday_close.hour - 8
    # and back again: asked just before Friday's close it is still open; just after, it opens Monday
    assert hours.is_open(friday_close - timedelta(minutes=1))
    assert hours.next_open(friday_close) == opens


def test_fixed_offset_and_bad_hours_are_clear() -> None:
    hours = WorkingHours(start="22:00", end="06:00", utc_offset="+05:30", days=["mon"])
    assert hours.next_open(datetime(2026, 11, 28, tzinfo=UTC)) == datetime(2026, 11, 30, 16, 30, tzinfo=UTC)
    with pytest.raises(ValueError, match="time_zone"):
        WorkingHours(start="09:00", end="17:00", time_zone="Nowhere/City")
    with pytest.raises(ValueError, match="mon, tue"):
        WorkingHours(start="09:00", end="17:00", days=["funday"])


def test_a_trigger_outside_working_hours_is_deferred_to_the_opening() -> None:
    w = world(start="2026-11-28T12:00:00Z")  # Saturday
    w.add_trigger(
        {
            "id": "reply",
            "kind": "tool_call",
            "when": {"tool": "add"},
            "working_hours": {"start": "09:00", "end": "17:00", "time_zone": "Europe/Berlin"},
            "actions": [{"call_tool": {"tool": "add", "args": {"body": "answered"}}}],
        }
    )
    w.call("add", {"body": "question"}, role="agent")
    assert w.triggers["reply"].status == "deferred"
    w.run_until_idle()
    assert w.triggers["reply"].status == "fired"
    assert w.now() == datetime(2026, 11, 30, 8, tzinfo=UTC)
    assert [r["body"] for r in w.query("desk", "SELECT body FROM notes")] == ["question", "answered"]


# ---- stochastic recurrence ---------------------------------------------------------------------------
def firing_times(seed: int) -> list[str]:
    w = world(seed=seed)
    w.add_trigger(
        {
            "id": "walk-in",
            "kind": "time",
            "when": {"at": "09:00", "every": {"dist": "exponential", "mean": "2h"}, "count": 6, "offset": "15m"},
            "actions": [{"call_tool": {"tool": "add", "args": {"body": "walk-in"}}}],
        }
    )
    w.run_until_idle(until="2026-12-10T00:00:00Z")
    return [e["virtual_time"] for e in w.trajectory.events if e["kind"] == "trigger"]


def test_same_seed_same_firing_times_different_seed_different() -> None:
    first, again, other = firing_times(1), firing_times(1), firing_times(2)
    assert len(first) == 6 and first[0] == "2026-11-23T09:15:00+00:00"
    assert first == again and first != other
    gaps = {b > a for a, b in pairwise(first)}
    assert gaps == {True}


def test_until_stops_a_fixed_recurrence() -> None:
    w = world()
    w.add_trigger(
        {
            "id": "tick",
            "kind": "time",
            "when": {"at": "2026-11-23T09:00:00Z", "every": "1h", "until": "2026-11-23T11:30:00Z"},
            "actions": [{"call_tool": {"tool": "add", "args": {"body": "tick"}}}],
        }
    )
    assert w.run_until_idle(until="2026-11-24T00:00:00Z") == 3


# ---- delays, barriers, statuses --------------------------------------------------------------------
def delayed(barrier: bool) -> World:
    w = world()
    w.add_trigger(
        {
            "id": "ack",
            "kind": "tool_call",
            "when": {"tool": "add", "args": {"body": "request"}},
            "delay": "30m",
            "barrier": barrier,
            "actions": [{"call_tool": {"tool": "add", "args": {"body": "ack"}, "as": "boss"}}],
        }
    )
    return w


def test_a_delay_queues_the_actions_and_a_barrier_holds_the_call_until_they_ran() -> None:
    w = delayed(barrier=False)
    w.call("add", {"body": "request"}, role="agent")
    assert w.triggers["ack"].status == "queued" and w.now() == datetime(2026, 11, 23, 8, tzinfo=UTC)
    assert w.fork().triggers["ack"].status == "queued"  # a waiting firing is state
    w.advance(1800)
    assert w.triggers["ack"].status == "fired"
    held = delayed(barrier=True)
    held.call("add", {"body": "request"}, role="agent")
    assert held.triggers["ack"].status == "fired"
    assert held.now() == datetime(2026, 11, 23, 8, 30, tzinfo=UTC)
    ack = [e for e in held.trajectory.events if e["kind"] == "tool_call" and e["args"] == {"body": "ack"}]
    assert ack[0]["role"] == "boss"


def test_verify_fails_the_firing_when_the_result_does_not_match() -> None:
    w = world()
    w.add_trigger(
        {
            "id": "check",
            "kind": "tool_call",
            "when": {"tool": "add"},
            "actions": [{"call_tool": {"tool": "add", "args": {"body": "x"}, "verify": {"body": "y"}}}],
        }
    )
    w.call("add", {"body": "go"}, role="agent")
    assert w.triggers["check"].status == "failed"
    assert w.triggers["check"].last_error["code"] == "verify_failed"


def test_an_nl_action_goes_to_the_executor_agent_which_acts_through_the_tools() -> None:
    w = world()
    seen: list[str] = []

    def executor(text: str) -> str:
        seen.append(text)
        assert w.triggers["approve"].status == "firing"
        w.call("add", {"body": "approved"}, role="boss")
        return "done"

    w.executors["manager"] = (executor, None)
    w.add_trigger(
        {
            "id": "approve",
            "kind": "tool_call",
            "when": {"tool": "add", "args": {"body": "please approve"}},
            "actions": [{"nl": {"text": "Approve: {{args.body}}", "executor": "manager"}}],
        }
    )
    w.call("add", {"body": "please approve"}, role="agent")
    assert seen == ["Approve: please approve"] and w.triggers["approve"].status == "fired"
    assert [r["body"] for r in w.query("desk", "SELECT body FROM notes")][-1] == "approved"


def test_await_fired_moves_time_until_the_trigger_has_fired() -> None:
    w = world()
    w.add_trigger(
        {
            "id": "noon",
            "kind": "time",
            "when": {"at": "12:00"},
            "actions": [{"call_tool": {"tool": "add", "args": {"body": "n"}}}],
        }
    )
    assert w.await_fired(["noon"], within=3600) == ["noon"]
    assert w.await_fired(["noon"], within=86400) == []
    assert w.now() == datetime(2026, 11, 23, 12, tzinfo=UTC)


def test_a_thousand_armed_triggers_still_fire_the_one_watching_the_call() -> None:
    w = world()
    for i in range(1000):
        when = {"tool": "get_time" if i % 2 else "add", "args": {"body": f"b{i}"}}
        action = {"call_tool": {"tool": "add", "args": {"body": f"hit{i}"}}}
        w.add_trigger({"id": f"t{i}", "kind": "tool_call", "when": when, "actions": [action]})
    w.call("add", {"body": "b998"}, role="agent")
    assert [t for t, a in w.triggers.items() if a.fired] == ["t998"]


def _busy(w: World) -> World:
    """Fixed, random, working-hours and delayed triggers at once, some due at the same instant."""
    hours = {"start": "09:00", "end": "17:00", "time_zone": "Europe/Berlin"}
    for i in range(24):
        every: Any = {"dist": "exponential", "mean": "3h"} if i % 3 == 0 else f"{2 + i % 5}h"
        w.add_trigger(
            {
                "id": f"t{i:02d}",
                "kind": "time",
                "when": {"at": f"{i % 4 + 8:02d}:00", "every": every, **({"count": 9} if i % 4 == 1 else {})},
                **({"working_hours": hours} if i % 5 == 0 else {}),
                **({"delay": "45m"} if i % 7 == 0 else {}),
                "actions": [{"call_tool": {"tool": "add", "args": {"body": f"t{i:02d}"}}}],
            }
        )
    return w


def test_the_incremental_timeline_fires_as_a_full_rebuild_does() -> None:
    """The index moves one trigger per firing on its heap; rebuilding the whole index after every change (what
    it replaced) must give the same firings at the same times, ties and deferred actions included."""
    fast, slow = _busy(world(seed=5)), _busy(world(seed=5))
    schedule = slow._schedule

    def rebuild_every_time(armed: Any, after: datetime) -> None:
        schedule(armed, after)
        slow._changed()

    slow._schedule = rebuild_every_time  # type: ignore[method-assign]
    for w in (fast, slow):
        w.run_until_idle(until="2026-11-25T08:00:00Z")
        w.remove_trigger("t03")  # a removal and a restore in the middle of the week
        w.restore(w.snapshot())
        w.run_until_idle(until="2026-11-30T08:00:00Z")

    def firings(w: World) -> list[tuple[str, str, str]]:
        return [(e["virtual_time"], e["kind"], e.get("trigger") or "") for e in w.trajectory.events]

    assert len(firings(fast)) > 500 and firings(fast) == firings(slow)
    assert {a.fired for a in fast.triggers.values()} == {a.fired for a in slow.triggers.values()}
