"""The public names of agentenv-agents: other distributions import only this module."""

from __future__ import annotations

from agentenv_agents.llm import LlmAgent, LlmAgentError, LlmSettings
from agentenv_agents.scripted import ScriptedAgent

__all__ = ["LlmAgent", "LlmAgentError", "LlmSettings", "ScriptedAgent"]
