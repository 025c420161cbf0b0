"""Agent validator steps 38–49: each checks that an A2A agent speaks the protocol (and, for most, the
agentenv agent-config extension) and returns rows and a score like every verifier.

Target: `agent` (a deploy_agent step: a fresh instance served on loopback, acting in a fork of its world)
or `url` (any A2A agent; checks that configure it restore what they changed).
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from agentenv.contracts import SandboxProvider, Step, StepContext, StepFailed
from pydantic import Field

from agentenv_validators import agent_checks as checks
from agentenv_validators.agent_target import (
    AgentTarget,
    AgentTargetSettings,
    agent_target_problems,
    open_agent_target,
)
from agentenv_validators.results import verdict

T = TypeVar("T", bound=AgentTargetSettings)
Rows = list[dict[str, Any]]


class AgentValidator(Step[T]):
    """Base: a verifier that opens the agent named by `agent` or `url` and runs `check` on it."""

    verifier: ClassVar[bool] = True

    def preflight(self, settings: T, step_ids: list[str]) -> list[tuple[str, str]]:
        return agent_target_problems(settings, step_ids)

    async def check(self, target: AgentTarget, settings: T, ctx: StepContext) -> Rows:
        raise NotImplementedError(f"{type(self).__name__} overrides `check`")

    async def execute(self, settings: T, ctx: StepContext) -> dict[str, Any]:
        async with open_agent_target(settings, ctx, self.name) as target:
            rows = await self.check(target, settings, ctx)
        return verdict(rows, agent=target.label)


class TargetOnly(AgentValidator[AgentTargetSettings]):
    """A validator whose check needs only the target (no settings of its own)."""

    Settings = AgentTargetSettings


class VerifyA2aAgentCard(TargetOnly):
    name = "verify_a2a_agent_card"
    description = "The agent card is served with the required fields (name, description, url, version, ...)."

    async def check(self, target: AgentTarget, settings: AgentTargetSettings, ctx: StepContext) -> Rows:
        return await checks.check_card(target)


class VerifyA2aAgentConfigIdentity(TargetOnly):
    name = "verify_a2a_agent_config_identity"
    description = "Configuring the agent's name and description (agent-config extension) changes its served card."

    async def check(self, target: AgentTarget, settings: AgentTargetSettings, ctx: StepContext) -> Rows:
        return await checks.check_identity(target)


class VerifyA2aAgentMcp(TargetOnly):
    name = "verify_a2a_agent_mcp"
    description = "The agent accepts an MCP server and really calls a known tool on it (the server's trajectory)."

    async def check(self, target: AgentTarget, settings: AgentTargetSettings, ctx: StepContext) -> Rows:
        return await checks.check_mcp(target)


class VerifyA2aCoreProtocol(TargetOnly):
    name = "verify_a2a_core_protocol"
    description = "Send a message and follow the task to completion: states, GetTask, errors, context."

    async def check(self, target: AgentTarget, settings: AgentTargetSettings, ctx: StepContext) -> Rows:
        return await checks.check_core_protocol(target)


class VerifyA2aModalities(TargetOnly):
    name = "verify_a2a_modalities"
    description = "The agent answers probes in each declared input modality (text always; image, audio, pdf, json)."

    async def check(self, target: AgentTarget, settings: AgentTargetSettings, ctx: StepContext) -> Rows:
        return await checks.check_modalities(target)


class VerifyA2aPeerAgents(TargetOnly):
    name = "verify_a2a_peer_agents"
    description = "Peers can be set and read back; the agent relays a secret token from a peer agent."

    async def check(self, target: AgentTarget, settings: AgentTargetSettings, ctx: StepContext) -> Rows:
        return await checks.check_peers(target)


class InstallSettings(AgentTargetSettings):
    sandbox: str = Field("inline", description="Sandbox provider for the fresh sandbox (default: inline).")


class VerifyA2aInstall(AgentValidator[InstallSettings]):
    name = "verify_a2a_install"
    description = "The agent's install declaration (files, commands) works in a fresh sandbox."
    Settings = InstallSettings

    async def check(self, target: AgentTarget, settings: InstallSettings, ctx: StepContext) -> Rows:
        from agentenv_runtime import make_provider

        def provider() -> SandboxProvider:
            try:
                return make_provider(settings.sandbox, ctx.config, ctx.host)
            except LookupError as exc:
                raise StepFailed(f"field `sandbox`: {exc}") from None

        return await checks.check_install(target, provider, timeout=settings.timeout)


class VerifyA2aSkillConfig(TargetOnly):
    name = "verify_a2a_skill_config"
    description = "Skills can be added and listed, and the agent uses one (its instructions show in the answer)."

    async def check(self, target: AgentTarget, settings: AgentTargetSettings, ctx: StepContext) -> Rows:
        return await checks.check_skills(target)


class VerifyA2aSnapshot(TargetOnly):
    name = "verify_a2a_snapshot"
    description = "Save state on one agent instance, load it on another; the second recalls a value from the first."

    async def check(self, target: AgentTarget, settings: AgentTargetSettings, ctx: StepContext) -> Rows:
        return await checks.check_snapshot(target)


class VerifyA2aTrajectory(TargetOnly):
    name = "verify_a2a_trajectory"
    description = "The agent returns its trajectory for a task, listing the tool calls it made."

    async def check(self, target: AgentTarget, settings: AgentTargetSettings, ctx: StepContext) -> Rows:
        return await checks.check_trajectory(target)


class RoleSettings(AgentTargetSettings):
    role: str | None = Field(
        None, description="Role to give the agent (default: another role its world defines, else its own)."
    )


class VerifyA2aRole(AgentValidator[RoleSettings]):
    name = "verify_a2a_role"
    description = "The agent accepts a role and reports it back (needed for RBAC)."
    Settings = RoleSettings

    async def check(self, target: AgentTarget, settings: RoleSettings, ctx: StepContext) -> Rows:
        return await checks.check_role(target, settings.role)


class VerifyA2aSystemPrompt(TargetOnly):
    name = "verify_a2a_system_prompt"
    description = "A system prompt set through the agent-config extension is honoured in the agent's answers."

    async def check(self, target: AgentTarget, settings: AgentTargetSettings, ctx: StepContext) -> Rows:
        return await checks.check_system_prompt(target)


AGENT_VALIDATORS: list[type[AgentValidator[Any]]] = [
    VerifyA2aAgentCard,
    VerifyA2aAgentConfigIdentity,
    VerifyA2aAgentMcp,
    VerifyA2aCoreProtocol,
    VerifyA2aModalities,
    VerifyA2aPeerAgents,
    VerifyA2aInstall,
    VerifyA2aSkillConfig,
    VerifyA2aSnapshot,
    VerifyA2aTrajectory,
    VerifyA2aRole,
    VerifyA2aSystemPrompt,
]
