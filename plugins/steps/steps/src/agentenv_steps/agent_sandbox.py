"""The sandbox `deploy_agent` makes for its agent: resource limits, time to live, network policy, environment.

The agent's sandbox is made by the first provider of the chain that can enforce every limit asked for (a
provider that cannot refuses the spec, naming the field; the chain moves on, and when none can the step fails
with each provider's reason). It is the agent's: `install_agent` installs into it (naming the deploy_agent
step as `sandbox`), `load_artifact agent=…` writes files into it, `collect_artifacts` and `verify_sandbox` read
it, and it is torn down with the run. `env_vars` are its environment; a value `env:NAME` or `secret:KEY` is
resolved when the agent is deployed (from the environment, or the configured secret store) and never recorded.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from agentenv.config import ConfigError
from agentenv.contracts import NetworkPolicy, SandboxSpec, StepContext, StepFailed
from agentenv_runtime import RUN_LABEL, resolve_reference
from pydantic import BeforeValidator, Field

from agentenv_steps._common import StepSettings, plugin_host
from agentenv_steps.sandbox import sandbox_from_chain

AGENT_LABEL = "agentenv.agent"
"""The label naming the deploy_agent step whose sandbox it is."""
DEFAULT_CHAIN = "process"
"""Where an agent's sandbox goes when neither the step nor the config's `sandbox.default` says."""
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _network(value: Any) -> Any:
    """`network = "loopback"` is short for `network = {mode = "loopback"}`."""
    return {"mode": value} if isinstance(value, str) else value


class AgentSandboxSettings(StepSettings):
    provider: str | None = Field(
        None,
        description="Sandbox provider, or a fallback chain (`docker,process`): the first that can enforce the "
        f"spec serves. Absent = config `sandbox.default`, else `{DEFAULT_CHAIN}`.",
    )
    image: str | None = Field(None, description="Image (or template) for providers that take one.")
    cpu: float | None = Field(None, gt=0, description="CPUs the agent may use.")
    memory_mb: int | None = Field(None, gt=0, description="Memory limit in megabytes.")
    disk_mb: int | None = Field(None, gt=0, description="Disk limit in megabytes.")
    ttl_seconds: int | None = Field(None, gt=0, description="Time to live: the sandbox stops after this many seconds.")
    network: Annotated[NetworkPolicy, BeforeValidator(_network)] = Field(
        default_factory=NetworkPolicy,
        description="`allow_all`, `loopback` (only its own loopback), `none` (no network at all), or "
        "`{mode = \"allowlist\", allow = [hosts]}`.",
    )


def env_var_problems(env_vars: dict[str, str], sandbox: AgentSandboxSettings | None) -> list[tuple[str, str]]:
    problems = []
    if env_vars and sandbox is None:
        problems.append(("env_vars", "they are the environment of the agent's sandbox: give `sandbox` too"))
    for name in env_vars:
        if not ENV_NAME.fullmatch(name):
            problems.append((f"env_vars.{name}", "a variable name is letters, digits and '_', not starting a digit"))
    return problems


async def make_agent_sandbox(
    settings: AgentSandboxSettings, env_vars: dict[str, str], ctx: StepContext, step_id: str
) -> tuple[Any, dict[str, Any]]:
    """(the sandbox, what the step's output says of it)."""
    host = plugin_host(ctx)
    env = {}
    for name, value in env_vars.items():
        try:
            env[name] = str(resolve_reference(value, field=f"env_vars.{name}", config=ctx.config, host=host))
        except (ConfigError, LookupError) as exc:
            raise StepFailed(f"field `env_vars.{name}`: {exc}") from None
    fields = settings.model_dump(exclude={"provider"}, exclude_none=True)
    try:
        spec = SandboxSpec.model_validate(
            {**fields, "env": env, "labels": {RUN_LABEL: ctx.run_id, AGENT_LABEL: step_id}}
        )
    except ValueError as exc:
        raise StepFailed(f"field `sandbox`: {exc}") from None
    chain = settings.provider or ctx.config.raw("sandbox.default") or DEFAULT_CHAIN
    field = "sandbox.provider" if settings.provider else f"sandbox.provider (absent: {chain})"
    box, served, passed = await sandbox_from_chain(chain, spec, field, ctx)
    network: Literal["allow_all", "allowlist", "loopback", "none"] = spec.network.mode
    described = {"id": box.id, "provider": served, "passed_over": passed, "network": network, "env": sorted(env)}
    return box, described
