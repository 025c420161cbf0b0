"""Installed agent kinds as policies: an agent's tool calls become episode steps, its reply the final answer.

This is how a scripted policy file (or an LLM agent) plays an episode exactly as it plays `agentenv run`, so
the two trajectories, and their digests and scores, can be compared one to one.
"""

from __future__ import annotations

from typing import Any

from agentenv import PluginHost
from agentenv.contracts import AgentKind, kinds

from agentenv_rl.episode import Episode, StepResult


class EpisodeTools:
    """`agentenv.contracts.ToolAccess` over an episode: every call is one `step()`."""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self.last: StepResult | None = None

    def list_tools(self) -> list[dict[str, Any]]:
        return self.episode.world.list_tools(self.episode.role)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.episode.done:
            return {"ok": False, "error": {"code": "episode_over", "message": "the episode was truncated"}}
        self.last = self.episode.step({"tool": name, "arguments": arguments})
        observation = self.last.observation
        return {key: observation[key] for key in ("ok", "result", "error") if key in observation}


def agent_of_kind(host: PluginHost, kind: str, settings: dict[str, Any]) -> AgentKind[Any]:
    """An agent of an installed kind (`scripted`, `llm`, …), its settings validated by the kind."""
    kind_cls = host.get(kinds.AGENT_KINDS, kind)
    return kind_cls(kind_cls.Settings.model_validate(settings))


async def play(episode: Episode, agent: AgentKind[Any]) -> StepResult:
    """Reset the episode and let the agent play it to its final answer."""
    observation, _ = episode.reset()
    tools = EpisodeTools(episode)
    response = await agent.respond(observation["prompt"], tools)
    if episode.done and tools.last is not None:  # truncated while the agent was still calling tools
        return tools.last
    return await episode.astep({"answer": response.text})
