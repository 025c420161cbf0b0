"""Conformance kit for envs: subclass `EnvConformance`, name your env class, and pytest runs the contract.

    from agentenv_testing.envs import EnvConformance

    class TestPhoneEnv(EnvConformance):
        env_class = PhoneEnv

What every env must do, whatever it simulates: be a valid contribution with a name and tools; describe each
tool with a JSON Schema an agent can read; load every artifact it ships; snapshot, restore and fork so that a
restored or forked env holds exactly the same state; refuse arguments that do not match a tool's schema
before the tool runs, leaving the state unchanged; and compose into a world. The base class is not named
`Test*`, so pytest collects only subclasses.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from agentenv.contracts import contribution_problem
from agentenv_runtime import Env, World


class EnvConformance:
    env_class: ClassVar[type[Env]]

    def make_env(self) -> Env:
        """A fresh env (override to pass settings)."""
        return self.env_class()

    def loaded_env(self) -> Env:
        """A fresh env with its first packaged artifact loaded (or none, when it ships none)."""
        env = self.make_env()
        names = sorted(self.env_class.artifact_paths())
        if names:
            env.load(env.find_artifact(names[0]))
        return env

    def test_is_a_valid_env_with_tools(self) -> None:
        assert contribution_problem(self.env_class, Env) is None
        assert self.env_class.tool_specs(), f"{self.env_class.__name__} has no @tool methods"

    def test_every_tool_describes_itself(self) -> None:
        for name, spec in self.env_class.tool_specs().items():
            described = spec.describe()
            assert described["name"] == name and described["description"], f"tool {name!r} has no description"
            schema = described["inputSchema"]
            assert schema.get("type") == "object", f"tool {name!r}: input schema is not an object schema"
            json.dumps(schema)

    def test_every_packaged_artifact_loads(self) -> None:
        for name in self.env_class.artifact_paths():
            env = self.make_env()
            env.load(env.find_artifact(name))
            assert env.loaded and env.loaded[-1].name == name

    def test_restore_and_fork_reproduce_the_state(self) -> None:
        env = self.loaded_env()
        before, snapshot = env.export(), env.snapshot()
        fork = env.fork()
        assert fork is not env and fork.export() == before
        env.restore(snapshot)
        assert env.export() == before
        fresh = self.make_env()
        fresh.restore(snapshot)
        assert fresh.export() == before

    def test_bad_arguments_are_refused_and_change_nothing(self) -> None:
        env = self.loaded_env()
        before = env.export()
        for name, spec in self.env_class.tool_specs().items():
            if not spec.input_schema.get("required"):
                continue
            result, error = env.call(name, {})
            assert result is None and error is not None, f"tool {name!r} ran without its required arguments"
            assert error["code"] == "invalid_arguments", error
        assert env.export() == before

    def test_composes_into_a_world(self) -> None:
        world = World([self.loaded_env()])
        listed: set[Any] = {tool["name"] for tool in world.list_tools()}
        assert set(self.env_class.tool_specs()) <= listed
