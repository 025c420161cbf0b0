"""Entry module of `agentenv-claude-code`: registers the `claude-code` agent kind (imported when a run uses it)."""

from __future__ import annotations

from agentenv.contracts import ClassRef
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_agent_kinds() -> list[ClassRef]:
    return [ClassRef("claude-code", "agentenv_claude_code.agent:ClaudeCodeAgent")]
