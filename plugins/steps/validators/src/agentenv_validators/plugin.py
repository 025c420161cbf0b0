"""Entry module of `agentenv-validators`: the validator step types and the `env validate` command.

Kept light: the step classes (and the MCP SDK, the gateway) are imported only inside the hooks and the
functions that use them.
"""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_steps() -> list[type[Any]]:
    """Env validators (30–37) and agent validators (38–49); each returns `score`, `rows`, `passed`."""
    from agentenv_validators.agent_steps import AGENT_VALIDATORS
    from agentenv_validators.env_steps import (
        VerifyEnvCard,
        VerifyEnvCoreProtocol,
        VerifyMcpToolSchema,
        VerifySpecConformance,
        VerifyUniverseLoadExportRoundtrip,
    )
    from agentenv_validators.verdict_steps import (
        CombineUniverseVerdicts,
        ValidationGateAggregator,
        VerifyMcpEnvAssessment,
    )

    return [
        VerifyMcpToolSchema,
        VerifySpecConformance,
        VerifyMcpEnvAssessment,
        ValidationGateAggregator,
        VerifyEnvCard,
        VerifyEnvCoreProtocol,
        VerifyUniverseLoadExportRoundtrip,
        CombineUniverseVerdicts,
        *AGENT_VALIDATORS,
    ]


@hookimpl
def agentenv_register_cli_commands() -> list[Any]:
    from agentenv.contracts.cli import CliCommand

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
