"""Entry module of `agentenv-steps`: registers the step types and the `hello` bundle.

Step classes are imported inside the hook bodies, so loading this module costs nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_steps() -> list[type[Any]]:
    """The lifecycle, data, world-rule, agent, sandbox, capture and code step types."""
    from agentenv_steps.agents import DeployAgent, PromptAgent
    from agentenv_steps.capture import CollectArtifacts, SnapshotAgentState
    from agentenv_steps.code import BuildMcpCli, RunCode
    from agentenv_steps.collaboration import AddSkills, RegisterAgentTriggers, Review
    from agentenv_steps.data import LoadArtifact, ResetEnv, SnapshotEnv
    from agentenv_steps.deploy import DeployEnv
    from agentenv_steps.lifecycle import DeployHumanAgent, InstallAgent, PeerAgents, TeardownSandboxes
    from agentenv_steps.rules import ModifyEnvToolAccess, RegisterEnvTriggers, SyncEnvClock
    from agentenv_steps.sandbox import DeploySandbox
    from agentenv_steps.server_config import ApplyServerConfig

    return [
        DeployEnv,
        LoadArtifact,
        SyncEnvClock,
        RegisterEnvTriggers,
        ModifyEnvToolAccess,
        SnapshotEnv,
        ResetEnv,
        DeployAgent,
        PromptAgent,
        DeploySandbox,
        DeployHumanAgent,
        InstallAgent,
        TeardownSandboxes,
        PeerAgents,
        AddSkills,
        Review,
        ApplyServerConfig,
        RegisterAgentTriggers,
        SnapshotAgentState,
        CollectArtifacts,
        BuildMcpCli,
        RunCode,
    ]


@hookimpl
def agentenv_register_bundles() -> list[Any]:
    """`hello`: a first task that runs offline (Slack + a scripted agent)."""
    from agentenv.contracts import BundleRef

    folder = Path(__file__).parent / "bundles" / "hello"
    return [BundleRef("hello", folder, "A scripted agent says hello in Slack #general; runs offline.")]
