"""Executor agents: the agents a world hands its triggers' `nl` actions to.

A trigger fires inside a tool call, which the world runs synchronously (often from an agent's own `respond`
on the run's event loop). The executor is a deployed agent of any kind, whose `respond` is a coroutine, so
it runs to completion on its own event loop in a helper thread while the call that fired the trigger waits:
nothing else touches the world meanwhile, and the executor's own tool calls go through the world's rules
as its role. A scripted executor makes the same calls on every run, so a seeded run stays reproducible.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable

from agentenv.contracts import StepContext, StepFailed
from agentenv_runtime import World

from agentenv_steps._refs import deployed_agent

DEFAULT_EXECUTOR = "executor"
"""The executor an `nl` action names when it names none."""


def executor_of(ctx: StepContext, step_id: str, world: World, timeout: float, field: str) -> Callable[[str], str]:
    """The world's executor callable for the agent deploy_agent step `step_id` made (in this same world)."""
    deployed = deployed_agent(ctx, step_id, field)
    if deployed.world is not world:
        raise StepFailed(
            f"field `{field}`: agent {step_id!r} acts in the world of step {deployed.env!r}, not this one; "
            "deploy the executor into the world whose triggers it serves"
        )

    def execute(instruction: str) -> str:
        async def respond() -> str:
            response = await asyncio.wait_for(deployed.agent.respond(instruction, deployed.tools), timeout)
            return str(getattr(response, "text", "") or "")

        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"executor-{step_id}") as pool:
            try:
                return pool.submit(asyncio.run, respond()).result()
            except TimeoutError:
                raise TimeoutError(f"no answer within {timeout:g} s (executor_timeout_seconds)") from None

    return execute
