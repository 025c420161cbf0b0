"""Rewinding a world to a tool-call position of its trajectory: state, clock, roles and triggers as they were
right after that call and what it set off; the trajectory keeps everything and records the rewind."""

from __future__ import annotations

from typing import Any

import pytest
from agentenv_runtime import Env, World, WorldError, tool


class Desk(Env):
    name = "desk"
    schema = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, at TEXT NOT NULL);"

    @tool
    def add(self, body: str) -> dict[str, Any]:
        """Add a note.

        Args:
            body: The text.
        """
        cur = self.db.execute("INSERT INTO notes (body, at) VALUES (?, ?)", (body, self.now().isoformat()))
        return {"id": cur.lastrowid}


def world() -> World:
    w = World([Desk()])
    w.clock.set("2026-11-23T08:00:00Z", mode="frozen")
    w.keep_rewind_points()
    w.add_trigger(
        {
            "id": "echo",
            "kind": "tool_call",
            "when": {"tool": "add", "args": {"body": "b"}},
            "actions": [{"call_tool": {"tool": "add", "args": {"body": "echo of b"}}}],
        }
    )
    return w


def notes(w: World) -> list[str]:
    return [r["body"] for r in w.query("desk", "SELECT body FROM notes ORDER BY id")]


def test_rewind_puts_back_state_clock_and_triggers_as_they_were_after_that_call() -> None:
    w = world()
    w.call("add", {"body": "a"})
    w.advance(3600)
    w.call("add", {"body": "b"})  # fires `echo`
    after_b = (w.state_digest(), w.now(), notes(w))
    position_b = next(e["seq"] for e in w.trajectory.events if e.get("args") == {"body": "b"})
    w.advance(3600)
    w.call("add", {"body": "c"})
    w.set_tool_access("default", disable=["add"])
    assert notes(w) == ["a", "b", "echo of b", "c"]

    assert w.rewind(position_b) == 1  # the point after `c` is dropped
    assert (w.state_digest(), w.now(), notes(w)) == after_b
    assert w.triggers["echo"].fired == 1 and w.rbac.permits("default", "add")
    kinds = [e["kind"] for e in w.trajectory.events]
    assert kinds[-1] == "rewind" and w.trajectory.events[-1]["to_event"] == position_b
    assert len([k for k in kinds if k == "tool_call"]) == 4  # nothing that happened is erased

    w.call("add", {"body": "d"})  # a new branch goes on from there
    assert notes(w) == ["a", "b", "echo of b", "d"]


@pytest.mark.parametrize(
    ("pick", "message"),
    [
        (lambda w: 99, "the trajectory has no event 99"),
        (lambda w: next(e["seq"] for e in w.trajectory.events if e["kind"] == "trigger"), "is a 'trigger' event"),
        (lambda w: next(e["seq"] for e in w.trajectory.events if e["kind"] == "tool_call" and e["trigger"]), "trigger"),
    ],
)
def test_positions_that_are_not_rewind_points_are_refused_with_the_choices(pick: Any, message: str) -> None:
    w = world()
    w.call("add", {"body": "b"})
    with pytest.raises(WorldError, match=message) as refused:
        w.rewind(pick(w))
    assert "rewind to" in str(refused.value)


def test_a_position_rewound_past_and_a_world_that_keeps_no_points() -> None:
    w = world()
    w.call("add", {"body": "a"})
    w.call("add", {"body": "x"})
    later = len(w.trajectory.events) - 1
    w.rewind(0)
    with pytest.raises(WorldError, match="or was rewound past"):
        w.rewind(later)
    plain = World([Desk()])
    plain.call("add", {"body": "a"})
    with pytest.raises(WorldError, match="keeps no rewind points"):
        plain.rewind(0)
    assert plain.rewind_points is None  # nothing is kept unless asked for


def test_a_fork_keeps_its_own_points() -> None:
    w = world()
    w.call("add", {"body": "a"})
    fork = w.fork()
    fork.call("add", {"body": "x"})
    fork.rewind(0)
    assert notes(fork) == ["a"] and notes(w) == ["a"]
