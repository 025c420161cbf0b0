"""Entry module of `agentenv-validators`: the validator step types and the `env validate` command.

Kept light: step classes are registered by name (`ClassRef`), and they (with the MCP SDK and the gateway)
are imported only when a task uses them.
"""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_steps() -> list[Any]:
    """Env validators (30–37) and agent validators (38–49); each returns `score`, `rows`, `passed`."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("verify_mcp_tool_schema", "agentenv_validators.env_steps:VerifyMcpToolSchema"),
        ClassRef("verify_spec_conformance", "agentenv_validators.env_steps:VerifySpecConformance"),
        ClassRef("verify_mcp_env_assessment", "agentenv_validators.verdict_steps:VerifyMcpEnvAssessment"),
        ClassRef("validation_gate_aggregator", "agentenv_validators.verdict_steps:ValidationGateAggregator"),
        ClassRef("verify_env_card", "agentenv_validators.env_steps:VerifyEnvCard"),
        ClassRef("verify_env_core_protocol", "agentenv_validators.env_steps:VerifyEnvCoreProtocol"),
        ClassRef(
            "verify_universe_load_export_roundtrip", "agentenv_validators.env_steps:VerifyUniverseLoadExportRoundtrip"
        ),
        ClassRef("combine_universe_verdicts", "agentenv_validators.verdict_steps:CombineUniverseVerdicts"),
        ClassRef("verify_a2a_agent_card", "agentenv_validators.agent_steps:VerifyA2aAgentCard"),
        ClassRef("verify_a2a_agent_config_identity", "agentenv_validators.agent_steps:VerifyA2aAgentConfigIdentity"),
        ClassRef("verify_a2a_agent_mcp", "agentenv_validators.agent_steps:VerifyA2aAgentMcp"),
        ClassRef("verify_a2a_core_protocol", "agentenv_validators.agent_steps:VerifyA2aCoreProtocol"),
        ClassRef("verify_a2a_modalities", "agentenv_validators.agent_steps:VerifyA2aModalities"),
        ClassRef("verify_a2a_peer_agents", "agentenv_validators.agent_steps:VerifyA2aPeerAgents"),
        ClassRef("verify_a2a_install", "agentenv_validators.agent_steps:VerifyA2aInstall"),
        ClassRef("verify_a2a_skill_config", "agentenv_validators.agent_steps:VerifyA2aSkillConfig"),
        ClassRef("verify_a2a_snapshot", "agentenv_validators.agent_steps:VerifyA2aSnapshot"),
        ClassRef("verify_a2a_trajectory", "agentenv_validators.agent_steps:VerifyA2aTrajectory"),
        ClassRef("verify_a2a_role", "agentenv_validators.agent_steps:VerifyA2aRole"),
        ClassRef("verify_a2a_system_prompt", "agentenv_validators.agent_steps:VerifyA2aSystemPrompt"),
    ]


@hookimpl
def agentenv_register_cli_commands() -> list[Any]:
    from agentenv.contracts import CliCommand

    return [
        CliCommand(
            name="env validate",
            help="Validate envs or a served world: tool schemas, interface, card, data plane, round trip.",
            target="agentenv_validators.cli:app",
        ),
        CliCommand(
            name="agent",
            help="Validate an A2A agent: card, protocol, modalities, agent-config extension (agent validate URL).",
            target="agentenv_validators.agent_cli:app",
        ),
    ]
