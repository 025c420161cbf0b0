"""Run the reference implementation's env validator steps (`verify_env_card`, `verify_env_core_protocol`) against
a served env, and print what they recorded as JSON.

Run in the reference venv of `tests/test_reference_interop.py` (agentenv-framework installed without its cloud
SDKs): `python validator_steps.py URL [TOKEN]`. The steps are theirs, unchanged; around them is what their runner
gives a step: the env registered in their local store (under $HOME) and a `TaskStepContext` whose deployed env
points at URL. Their steps reach an env on a private network, so they send no token; with TOKEN, the httpx
client they use sends it, as the gateway in front of their envs would.
"""

import asyncio
import functools
import json
import sys

import httpx
from agent_env.env.env import DeployedEnv, Env
from agent_env.env.registry import get_env_registry
from agent_env.env.store import get_env_store
from agent_env.task_step.context import TaskStepContext
from agent_env.task_step.task_steps.env_card_validator import (
    VerifyCoreEnvironmentProtocolStep,
    VerifyEnvironmentCardStep,
)


class ServedWorld(Env):
    """An env served elsewhere: the record their steps read and write metadata on."""

    description = "an agentenv world served by its gateway"
    type = "served_world"

    @classmethod
    def from_dict(cls, data: dict) -> "ServedWorld":
        return cls(data["id"], data.get("version"), metadata=data.get("metadata"))


async def main(url: str, token: str | None) -> None:
    if token:
        httpx.AsyncClient = functools.partial(httpx.AsyncClient, headers={"authorization": f"Bearer {token}"})
    get_env_registry()[ServedWorld.type] = ServedWorld
    env = get_env_store().put_document(ServedWorld("world", None))
    deployed = DeployedEnv(env_id="world", env_version=env.version,
                           environment_card_url=f"{url}/.well-known/agent-env.json")
    context = TaskStepContext(deployed_envs=[deployed])
    for step in (VerifyEnvironmentCardStep("card", None, env_id="world"),
                 VerifyCoreEnvironmentProtocolStep("core", None, env_id="world")):
        context = await step.execute(context)
    print(json.dumps(context.metadata["verifications"], default=str))


asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
