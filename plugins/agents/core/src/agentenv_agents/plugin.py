"""Entry module of `agentenv-agents`: registers the `scripted` and `llm` agent kinds."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_agent_kinds() -> list[Any]:
    """`scripted` replays a policy file offline; `llm` drives a chat-completions endpoint with tool calling."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("scripted", "agentenv_agents.scripted:ScriptedAgent"),
        ClassRef("llm", "agentenv_agents.llm:LlmAgent"),
    ]
