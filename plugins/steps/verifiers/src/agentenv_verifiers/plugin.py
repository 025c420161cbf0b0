"""Entry module of `agentenv-verifiers`: registers the verifier step types."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_steps() -> list[type[Any]]:
    """Verifier steps: each returns `score`, `rows` and `passed`; the task's score comes from them."""
    from agentenv_verifiers.aggregate import AggregateVerifiers
    from agentenv_verifiers.env_outcome import EnvOutcomeVerifier
    from agentenv_verifiers.response import AgentPromptResponseVerifier
    from agentenv_verifiers.rubrics import RubricsVerifier
    from agentenv_verifiers.sandbox import VerifySandbox

    return [EnvOutcomeVerifier, AgentPromptResponseVerifier, RubricsVerifier, VerifySandbox, AggregateVerifiers]
