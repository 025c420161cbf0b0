"""Conformance kit for trigger kinds: subclass `TriggerKindConformance`, name your kind and one valid `when`
table, and pytest runs the contract.

    from agentenv_testing.triggers import TriggerKindConformance

    class TestEveryNth(TriggerKindConformance):
        trigger_class = EveryNthCall
        example = {"tool": "bump", "every": 2}

What every trigger kind must do: be a valid contribution with a name, a description and a `Settings` model for
`when`; accept the example and refuse an unknown field (a typo in a task file fails when the trigger is
registered, not when it should have fired); arm in a real world; and decide deterministically: two worlds given
the same calls fire the same triggers at the same virtual times. Worlds here hold `CounterEnv`, a one-table env
with a `bump` tool, so the kit needs no other plugin.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agentenv.contracts import TriggerKind
from agentenv_runtime import Env, World, tool

from agentenv_testing._contract import refuses_unknown_fields, valid_contribution


class CounterEnv(Env):
    """A counter to call tools on: `bump` adds one, `count` reads it."""

    name = "kit_counter"
    schema = "CREATE TABLE bumps (id INTEGER PRIMARY KEY, note TEXT NOT NULL DEFAULT '');"

    @tool
    def bump(self, note: str = "") -> dict[str, int]:
        """Add one to the counter.

        Args:
            note: Free text, for argument predicates.
        """
        cur = self.db.execute("INSERT INTO bumps (note) VALUES (?)", (note,))
        return {"count": int(cur.lastrowid or 0)}

    @tool(read_only=True)
    def count(self) -> dict[str, int]:
        """How many bumps so far."""
        return {"count": self.db.execute("SELECT COUNT(*) FROM bumps").fetchone()[0]}


class TriggerKindConformance:
    trigger_class: ClassVar[type[TriggerKind[Any]]]
    example: ClassVar[dict[str, Any]] = {}
    calls: ClassVar[int] = 6
    """How many `bump` calls the determinism test makes (with `advance_seconds` of virtual time after each)."""
    advance_seconds: ClassVar[float] = 60.0

    def world(self) -> World:
        """A world of one `CounterEnv`, its clock armed at a fixed start, with this kind installed."""
        world = World([CounterEnv()], trigger_kinds={self.trigger_class.name: self.trigger_class})
        world.set_clock("2026-01-01T09:00:00Z", mode="frozen")
        return world

    def test_is_a_valid_trigger_kind(self) -> None:
        valid_contribution(self.trigger_class, TriggerKind, f"trigger kind {self.trigger_class.name!r}")

    def test_the_example_validates_and_unknown_fields_are_refused(self) -> None:
        refuses_unknown_fields(self.trigger_class.Settings, self.example, f"trigger kind {self.trigger_class.name!r}")

    def test_arms_in_a_world(self) -> None:
        world = self.world()
        world.add_trigger(self._definition())
        assert "kit" in world.triggers

    def test_fires_deterministically(self) -> None:
        fired = [self._play(self.world()) for _ in range(2)]
        assert fired[0] == fired[1], "the same calls must fire the same triggers at the same times"

    def _definition(self) -> dict[str, Any]:
        action = {"call_tool": {"tool": "count", "role": "system"}}
        return {"id": "kit", "kind": self.trigger_class.name, "when": self.example, "actions": [action], "repeat": True}

    def _play(self, world: World) -> list[tuple[str, str]]:
        world.add_trigger(self._definition())
        for index in range(self.calls):
            world.call("bump", {"note": f"call {index}"})
            world.advance(self.advance_seconds)
        return [(e["virtual_time"], e["trigger"]) for e in world.trajectory.events if e["kind"] == "trigger"]
