"""Entry module of `agentenv-verifiers`: registers the verifier step types."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_steps() -> list[Any]:
    """Verifier steps: each returns `score`, `rows` and `passed`; the task's score comes from them."""
    from agentenv.contracts.ref import ClassRef

    return [
        ClassRef("env_outcome_verifier", "agentenv_verifiers.env_outcome:EnvOutcomeVerifier"),
        ClassRef("agent_prompt_response_verifier", "agentenv_verifiers.response:AgentPromptResponseVerifier"),
        ClassRef("rubrics_verifier", "agentenv_verifiers.rubrics:RubricsVerifier"),
        ClassRef("verify_sandbox", "agentenv_verifiers.sandbox:VerifySandbox"),
        ClassRef("aggregate_verifiers", "agentenv_verifiers.aggregate:AggregateVerifiers"),
    ]
