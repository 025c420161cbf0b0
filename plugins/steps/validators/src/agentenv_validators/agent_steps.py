"""Agent validator steps 38–49: each checks that an A2A agent speaks the protocol (and, for most, the
agentenv agent-config extension) and returns rows and a score like every verifier.

Target: `agent` (a deploy_agent step: a fresh instance served on loopback, acting in a fork of its world)
or `url` (any A2A agent; checks that configure it restore what they changed).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from agentenv.contracts import Step, StepContext, StepFailed
from pydantic import BaseModel, Field

from agentenv_validators import agent_checks as checks
from agentenv_validators.agent_target import AgentTargetSettings, agent_target_problems, open_agent_target
from agentenv_validators.results import verdict


class AgentValidator(Step[AgentTargetSettings]):
    """Base: a verifier that checks the agent named by `agent` or `url` with `check`."""

    verifier: ClassVar[bool] = True
    Settings = AgentTargetSettings

    def preflight(self, settings: BaseModel, step_ids: list[str]) -> list[tuple[str, str]]:
        return agent_target_problems(settings, step_ids)  # type: ignore[arg-type]

    probe: ClassVar[Callable[[Any], Awaitable[list[dict[str, Any]]]] | None] = None
    """The check of `agent_checks` this step runs, for steps whose check takes only the target."""

    async def check(self, target: Any, settings: Any, ctx: StepContext) -> list[dict[str, Any]]:
        assert self.probe is not None, f"{type(self).__name__} sets `probe` or overrides `check`"
        return await type(self).probe(target)  # type: ignore[misc]

    async def execute(self, settings: BaseModel, ctx: StepContext) -> dict[str, Any]:
        s: AgentTargetSettings = settings  # type: ignore[assignment]
        async with open_agent_target(s, ctx, self.name) as target:
            rows = await self.check(target, s, ctx)
        return verdict(rows, agent=target.label)


class VerifyA2aAgentCard(AgentValidator):
    name = "verify_a2a_agent_card"
    description = "The agent card is served with the required fields (name, description, url, version, ...)."
    probe = staticmethod(checks.check_card)


class VerifyA2aAgentConfigIdentity(AgentValidator):
    name = "verify_a2a_agent_config_identity"
    description = "Configuring the agent's name and description (agent-config extension) changes its served card."
    probe = staticmethod(checks.check_identity)


class VerifyA2aAgentMcp(AgentValidator):
    name = "verify_a2a_agent_mcp"
    description = "The agent accepts an MCP server and really calls a known tool on it (the server's trajectory)."
    probe = staticmethod(checks.check_mcp)


class VerifyA2aCoreProtocol(AgentValidator):
    name = "verify_a2a_core_protocol"
    description = "Send a message and follow the task to completion: states, GetTask, errors, context."
    probe = staticmethod(checks.check_core_protocol)


class VerifyA2aModalities(AgentValidator):
    name = "verify_a2a_modalities"
    description = "The agent answers probes in each declared input modality (text always; image, audio, pdf, json)."
    probe = staticmethod(checks.check_modalities)


class VerifyA2aPeerAgents(AgentValidator):
    name = "verify_a2a_peer_agents"
    description = "Peers can be set and read back; the agent relays a secret token from a peer agent."
    probe = staticmethod(checks.check_peers)


class InstallSettings(AgentTargetSettings):
    sandbox: str = Field("inline", description="Sandbox provider for the fresh sandbox (default: inline).")


class VerifyA2aInstall(AgentValidator):
    name = "verify_a2a_install"
    description = "The agent's install declaration (files, commands) works in a fresh sandbox."
    Settings = InstallSettings

    async def check(self, target: Any, settings: Any, ctx: StepContext) -> list[dict[str, Any]]:
        from agentenv_runtime.sandboxes import make_provider

        def provider() -> Any:
            try:
                return make_provider(settings.sandbox, ctx.config, ctx.host)
            except LookupError as exc:
                raise StepFailed(f"field `sandbox`: {exc}") from None

        return await checks.check_install(target, provider, timeout=settings.timeout)


class VerifyA2aSkillConfig(AgentValidator):
    name = "verify_a2a_skill_config"
    description = "Skills can be added and listed, and the agent uses one (its instructions show in the answer)."
    probe = staticmethod(checks.check_skills)


class VerifyA2aSnapshot(AgentValidator):
    name = "verify_a2a_snapshot"
    description = "Save state on one agent instance, load it on another; the second recalls a value from the first."
    probe = staticmethod(checks.check_snapshot)


class VerifyA2aTrajectory(AgentValidator):
    name = "verify_a2a_trajectory"
    description = "The agent returns its trajectory for a task, listing the tool calls it made."
    probe = staticmethod(checks.check_trajectory)


class RoleSettings(AgentTargetSettings):
    role: str | None = Field(
        None, description="Role to give the agent (default: another role its world defines, else its own)."
    )


class VerifyA2aRole(AgentValidator):
    name = "verify_a2a_role"
    description = "The agent accepts a role and reports it back (needed for RBAC)."
    Settings = RoleSettings

    async def check(self, target: Any, settings: Any, ctx: StepContext) -> list[dict[str, Any]]:
        return await checks.check_role(target, settings.role)


class VerifyA2aSystemPrompt(AgentValidator):
    name = "verify_a2a_system_prompt"
    description = "A system prompt set through the agent-config extension is honoured in the agent's answers."
    probe = staticmethod(checks.check_system_prompt)


AGENT_VALIDATORS: list[type[AgentValidator]] = [
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
