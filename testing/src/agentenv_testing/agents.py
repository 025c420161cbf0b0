"""Conformance kit for agent kinds: subclass `AgentKindConformance`, name your kind and one valid settings
table, and pytest runs the contract.

    from agentenv_testing.agents import AgentKindConformance

    class TestEcho(AgentKindConformance):
        agent_class = EchoAgent
        example = {"greeting": "hi"}

What every agent kind must do: be a valid contribution with a name, a description and a `Settings` model; accept
the example and refuse an unknown field; and answer a prompt with an `AgentResponse`, acting only through the
`ToolAccess` it is given (here a real world of `CounterEnv`, whose every call lands in the trajectory).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from agentenv.contracts import AgentKind, AgentResponse
from agentenv_runtime import World

from agentenv_testing._contract import refuses_unknown_fields, valid_contribution
from agentenv_testing.triggers import CounterEnv


class AgentKindConformance:
    agent_class: ClassVar[type[AgentKind[Any]]]
    example: ClassVar[dict[str, Any]] = {}
    prompt: ClassVar[str] = "Bump the counter once, then say how many bumps there are."

    def make_agent(self) -> AgentKind[Any]:
        return self.agent_class(self.agent_class.Settings.model_validate(self.example))

    def world(self) -> World:
        return World([CounterEnv()])

    def respond(self, world: World) -> AgentResponse:
        return asyncio.run(self.make_agent().respond(self.prompt, world.tool_access()))

    def test_is_a_valid_agent_kind(self) -> None:
        valid_contribution(self.agent_class, AgentKind, f"agent kind {self.agent_class.name!r}")

    def test_the_example_validates_and_unknown_fields_are_refused(self) -> None:
        refuses_unknown_fields(self.agent_class.Settings, self.example, f"agent kind {self.agent_class.name!r}")

    def test_answers_a_prompt_with_a_response(self) -> None:
        response = self.respond(self.world())
        assert isinstance(response, AgentResponse)

    def test_acts_only_through_the_world(self) -> None:
        world = self.world()
        self.respond(world)
        calls = [e for e in world.trajectory.events if e["kind"] == "tool_call"]
        assert all(e["role"] == "default" for e in calls), "every call goes through the ToolAccess it was given"
