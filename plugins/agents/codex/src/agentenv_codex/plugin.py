"""Entry module of `agentenv-codex`: registers the `codex` agent kind (imported when a run uses it)."""

from __future__ import annotations

from agentenv.contracts import ClassRef
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_agent_kinds() -> list[ClassRef]:
    return [ClassRef("codex", "agentenv_codex.agent:CodexAgent")]
