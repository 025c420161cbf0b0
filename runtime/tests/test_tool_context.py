"""A tool that declares a `context` parameter sees its call: the caller's role, the virtual time, the world's
episode and the trigger that made the call. `context` is not an argument: it is in no schema, and a caller cannot
pass it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agentenv_runtime import Env, ToolContext, World, tool


class Ledger(Env):
    """Records who wrote what, and when (tool context tests)."""

    name = "ledger"
    schema = "CREATE TABLE entries (id INTEGER PRIMARY KEY, text TEXT NOT NULL);"

    @tool
    def write(self, text: str, context: ToolContext) -> dict[str, Any]:
        """Write an entry.

        Args:
            text: What to write.
        """
        self.db.execute("INSERT INTO entries (text) VALUES (?)", (text,))
        return {"text": text, "role": context.role, "now": context.now.isoformat(), "episode": context.episode,
                "trigger": context.trigger}

    @tool(read_only=True)
    def count(self) -> int:
        """How many entries there are."""
        return int(self.db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])


START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def ledger_world() -> World:
    world = World([Ledger()], roles={"clerk": {"tools": ["write", "count"]}})
    world.clock.set(START)
    world.episode = "episode-7"
    return world


def test_the_tool_sees_the_callers_role_the_virtual_time_and_the_episode() -> None:
    outcome = ledger_world().call("write", {"text": "hello"}, role="clerk")
    assert outcome.error is None, outcome.error
    assert outcome.result == {"text": "hello", "role": "clerk", "now": START.isoformat(), "episode": "episode-7",
                              "trigger": None}


def test_a_triggered_call_names_its_trigger() -> None:
    world = ledger_world()
    world.add_trigger({"id": "echo", "kind": "tool_call", "when": {"tool": "count"},
                       "actions": [{"call_tool": {"tool": "write", "role": "system", "args": {"text": "seen"}}}]})
    world.call("count", {}, role="clerk")
    written = [e for e in world.trajectory.events if e.get("tool") == "write"]
    assert [(e["role"], e["result"]["role"], e["result"]["trigger"]) for e in written] == [("system", "system", "echo")]


def test_context_is_not_an_argument() -> None:
    spec = Ledger.tool_specs()["write"]
    assert set(spec.input_schema["properties"]) == {"text"}
    refused = ledger_world().call("write", {"text": "x", "context": "forged"}, role="clerk")
    assert refused.error is not None and refused.error["code"] == "invalid_arguments"


def test_outside_a_world_the_context_has_no_role() -> None:
    result, error = Ledger().call("write", {"text": "direct"})
    assert error is None and result["role"] is None and result["episode"] is None
