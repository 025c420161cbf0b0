"""Entry module of `agentenv-steps`: registers the step types, verifiers included.

Step classes are registered by name (`ClassRef`): a run imports only the step types its task uses.
"""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_steps() -> list[Any]:
    """The lifecycle, data, world-rule, agent, sandbox, capture, code and verifier step types."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("deploy_env", "agentenv_steps.deploy:DeployEnv"),
        ClassRef("load_artifact", "agentenv_steps.data:LoadArtifact"),
        ClassRef("sync_env_clock", "agentenv_steps.rules:SyncEnvClock"),
        ClassRef("register_env_triggers", "agentenv_steps.rules:RegisterEnvTriggers"),
        ClassRef("modify_env_tool_access", "agentenv_steps.rules:ModifyEnvToolAccess"),
        ClassRef("snapshot_env", "agentenv_steps.data:SnapshotEnv"),
        ClassRef("reset_env", "agentenv_steps.data:ResetEnv"),
        ClassRef("rewind_env", "agentenv_steps.data:RewindEnv"),
        ClassRef("deploy_agent", "agentenv_steps.agents:DeployAgent"),
        ClassRef("prompt_agent", "agentenv_steps.agents:PromptAgent"),
        ClassRef("deploy_sandbox", "agentenv_steps.sandbox:DeploySandbox"),
        ClassRef("deploy_human_agent", "agentenv_steps.lifecycle:DeployHumanAgent"),
        ClassRef("install_agent", "agentenv_steps.lifecycle:InstallAgent"),
        ClassRef("teardown_sandboxes", "agentenv_steps.lifecycle:TeardownSandboxes"),
        ClassRef("peer_agents", "agentenv_steps.lifecycle:PeerAgents"),
        ClassRef("add_skills", "agentenv_steps.collaboration:AddSkills"),
        ClassRef("review", "agentenv_steps.collaboration:Review"),
        ClassRef("apply_server_config", "agentenv_steps.server_config:ApplyServerConfig"),
        ClassRef("register_agent_triggers", "agentenv_steps.collaboration:RegisterAgentTriggers"),
        ClassRef("snapshot_agent_state", "agentenv_steps.capture:SnapshotAgentState"),
        ClassRef("collect_artifacts", "agentenv_steps.capture:CollectArtifacts"),
        ClassRef("build_mcp_cli", "agentenv_steps.code:BuildMcpCli"),
        ClassRef("run_code", "agentenv_steps.code:RunCode"),
        # verifiers: each returns `score`, `rows` and `passed`; the task's score comes from them
        ClassRef("env_outcome_verifier", "agentenv_steps.verifiers.env_outcome:EnvOutcomeVerifier"),
        ClassRef("agent_prompt_response_verifier", "agentenv_steps.verifiers.response:AgentPromptResponseVerifier"),
        ClassRef("rubrics_verifier", "agentenv_steps.verifiers.rubrics:RubricsVerifier"),
        ClassRef("verify_sandbox", "agentenv_steps.verifiers.sandbox:VerifySandbox"),
        ClassRef("aggregate_verifiers", "agentenv_steps.verifiers.aggregate:AggregateVerifiers"),
    ]
