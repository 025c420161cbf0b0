"""`apply_server_config`: configuration directives for the env servers of a deployed world.

Two kinds of directive:

- **`fault`** — generic fault injection, for every env: `{"tool": "post_message", "error": "timeout",
  "times": 1}` makes the next N calls of that world tool fail with that error code (the app is not called,
  so nothing changes; the failure is recorded in the trajectory like any refused call). Several faults are a
  list; `"fault": []` clears them.
- **everything else** is handed to the envs that opt in by defining `configure(directives: dict) -> Any`
  (an acting persona, a latency profile, …). An env without `configure` ignores them when the step
  targets all envs, and fails the step when it is named in `envs`.

Faults are installed by wrapping each env instance's `call` (the world calls `env.call` for every tool
call), because the kernel has no hook for it. They are not part of world snapshots.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from agentenv.contracts import StepContext, StepFailed
from agentenv_runtime import World
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentenv_steps._common import CoreStep, StepSettings, deployed_world, missing_step, validation_message


class Fault(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1, description="The world tool (its public name) that fails.")
    error: str = Field("fault_injected", min_length=1, description="Error code the caller sees (e.g. `timeout`).")
    message: str | None = Field(None, description="Error message; default names the fault.")
    times: int = Field(1, ge=1, description="How many calls fail, from the next one on.")


def parse_faults(value: Any) -> list[Fault]:
    return [Fault.model_validate(item) for item in (value if isinstance(value, list) else [value])]


class ApplyServerConfigSettings(StepSettings):
    env: str = Field(description="The deploy_env step whose world's env servers get the directives.")
    envs: list[str] | None = Field(None, description="Only these apps of the world; absent = all of them.")
    directives: dict[str, Any] = Field(
        min_length=1, description="`fault` ({tool, error, message, times} or a list) and app directives."
    )

    @field_validator("directives")
    @classmethod
    def _faults(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "fault" in value:
            try:
                parse_faults(value["fault"])
            except ValidationError as exc:
                raise ValueError(f"fault: {validation_message(exc)}") from None
        return value


class ApplyServerConfig(CoreStep[ApplyServerConfigSettings]):
    name = "apply_server_config"
    description = "Send configuration directives to a world's env servers: fault injection, app settings."
    Settings = ApplyServerConfigSettings

    def check(self, settings: ApplyServerConfigSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("env", settings.env, step_ids, "deploy_env")

    async def execute(self, settings: ApplyServerConfigSettings, ctx: StepContext) -> dict[str, Any]:
        world: World = deployed_world(ctx, settings.env)
        names = settings.envs or list(world.envs)
        unknown = [name for name in names if name not in world.envs]
        if unknown:
            raise StepFailed(
                f"field `envs`: world {world.name!r} has no app {', '.join(unknown)} (apps: {', '.join(world.envs)})"
            )
        directives = dict(settings.directives)
        output: dict[str, Any] = {}
        if "fault" in directives:
            faults = parse_faults(directives.pop("fault"))
            output["faults"] = install_faults(world, names, faults)
        if directives:
            configured: dict[str, Any] = {}
            for name in names:
                env = world.envs[name]
                configure = getattr(env, "configure", None)
                if not callable(configure):
                    if settings.envs:
                        raise StepFailed(
                            f"field `envs`: app {name!r} takes no directives (it has no `configure(directives)` "
                            f"method; apps opt in by defining one); only `fault` works for every app"
                        )
                    continue
                try:
                    configured[name] = configure(dict(directives))
                except (ValueError, TypeError, KeyError) as exc:
                    raise StepFailed(f"field `directives`: app {name!r} refused them: {exc}") from None
            if not configured:
                raise StepFailed(
                    f"field `directives`: no app of world {world.name!r} takes directives "
                    f"({', '.join(sorted(directives))}); apps opt in with a `configure(directives)` method"
                )
            output["configured"] = configured
        world.trajectory.record(
            "server_config", world.clock.now().isoformat(), by=ctx.step_id, envs=names, directives=settings.directives
        )
        return output


_INJECTORS: weakref.WeakKeyDictionary[Any, FaultInjector] = weakref.WeakKeyDictionary()
"""The fault injector wrapping each env that has had faults armed (gone with the env)."""


class FaultInjector:
    """Wraps one env's `call`: a tool with pending faults fails without reaching the app."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.inner: Callable[[str, dict[str, Any]], tuple[Any, dict[str, Any] | None]] = env.call
        self.pending: dict[str, list[Fault]] = {}  # env-level tool name → faults, oldest first
        env.call = self.call

    def call(self, tool_name: str, arguments: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        queue = self.pending.get(tool_name)
        if queue:
            fault = queue[0]
            fault.times -= 1
            if fault.times <= 0:
                queue.pop(0)
            message = fault.message or f"{fault.tool} failed: injected fault {fault.error!r} (apply_server_config)"
            return None, {"code": fault.error, "message": message, "injected": True}
        return self.inner(tool_name, arguments)


def install_faults(world: World, names: list[str], faults: list[Fault]) -> list[dict[str, Any]]:
    """Arm the faults on the apps owning their tools; an empty list clears every fault of those apps."""
    for name in names:
        injector = _INJECTORS.get(world.envs[name])
        if injector is not None:
            injector.pending.clear()
    armed = []
    for fault in faults:
        entry = world.tools.get(fault.tool)
        if entry is None or entry[0].name not in names:
            raise StepFailed(
                f"field `directives.fault`: no tool {fault.tool!r} in the targeted apps of world {world.name!r}"
            )
        env, spec = entry
        injector = _INJECTORS.get(env)
        if injector is None:
            injector = _INJECTORS[env] = FaultInjector(env)
        injector.pending.setdefault(spec.name, []).append(fault.model_copy())
        armed.append(fault.model_dump())
    return armed
