"""Agent Lightning (v1) over any task: `AgentLightningAgent` is the `agent_class` its rollout controller runs.

Agent Lightning v1 trains an agent as it runs: for each rollout the controller starts the configured
`agent_class` in a process of its own (a class made with no arguments whose `run()` it awaits), with three
variables set: `AGL_OPENAI_BASE_URL` (the gateway's OpenAI-compatible proxy for this rollout, which captures every
model request and its tokens), `AGL_EVENT_URL` (where the rollout's events go) and `AGL_KEY`; the configured
`env_map` adds variables taken from the rollout's input (the dataset row). The trainer reads the rollout's last
`reward` event as its reward.

So the agent plays one episode with `rollout` (a fresh fork of the task's start), asking the proxy for each
assistant message (the world's tools offered as OpenAI function tools), and posts the task's verifiers' score as
the `reward` event (its data also carries `agentenv`: score, passed, trajectory digest, turns). The task comes
from `AGENTENV_TASK` (and `AGENTENV_SEED`, `AGENTENV_TOOLS`: a JSON list) — `ENV_MAP` maps them from a row
`{"task": …, "seed": …}` — or from a subclass's class attributes. Nothing of Agent Lightning is imported: the
contract is the process, its variables and two HTTP endpoints.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from agentenv_rl.adapters.rollout import Trajectory, rollout
from agentenv_rl.split import EpisodeError

AGENT_CLASS = "agentenv_rl.adapters.agent_lightning:AgentLightningAgent"
"""What Agent Lightning's `local.agent_class` names to play any task."""
ENV_MAP = {"AGENTENV_TASK": "input.task", "AGENTENV_SEED": "input.seed"}
"""Agent Lightning's `local.env_map` for the rows `agent_lightning_rows` writes (every path must be in a row)."""


def agent_lightning_rows(task: str, seeds: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """Dataset rows (rollout inputs) for `task`, one per seed (the task's own without seeds): `{"task", "seed"}`."""
    from agentenv_rl.adapters.starts import base_episode

    return [{"task": task, "seed": base_episode(task, seed).seed} for seed in (list(seeds) if seeds else [None])]


def _post(url: str, body: Mapping[str, Any], key: str, timeout: float) -> dict[str, Any]:
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        answer: dict[str, Any] = json.loads(response.read() or b"{}")
        return answer


class AgentLightningAgent:
    """One episode per process, its model the Agent Lightning gateway's proxy, its reward the task's score."""

    task: str | None = None
    """BUNDLE[:TASK], a bundle folder or a task file; `AGENTENV_TASK` overrides it."""
    seed: int | None = None
    """The episode's seed; `AGENTENV_SEED` overrides it (None: the task's own)."""
    tools: Sequence[str] | None = None
    """Offer only these tools; `AGENTENV_TOOLS` (a JSON list) overrides it."""
    max_turns: int = 64
    model: str = "agentenv"
    """The model name sent; the gateway replaces it with the model it serves."""
    timeout: float = 600.0
    """Seconds to wait for one model reply."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self.environ = dict(os.environ if environ is None else environ)

    def _setting(self, name: str) -> str:
        value = self.environ.get(name, "")
        if not value:
            raise EpisodeError(
                f"{type(self).__name__}: environment variable {name} is not set; Agent Lightning's rollout "
                "controller sets it for the agent_class it starts (run the agent through the controller)"
            )
        return value

    def chosen_task(self) -> tuple[str, int | None, list[str] | None]:
        """(task, seed, tools) from the environment, else the class attributes."""
        task = self.environ.get("AGENTENV_TASK") or self.task
        if not task:
            raise EpisodeError(
                f"{type(self).__name__}: no task: set `task` on a subclass, or map one from the rollout's input "
                f"with local.env_map {json.dumps(ENV_MAP)}"
            )
        seed_text = self.environ.get("AGENTENV_SEED", "")
        try:
            seed = int(seed_text) if seed_text not in ("", "null") else self.seed
        except ValueError:
            raise EpisodeError(f"AGENTENV_SEED: {seed_text!r} is not an integer seed") from None
        tools_text = self.environ.get("AGENTENV_TOOLS", "")
        tools = json.loads(tools_text) if tools_text else self.tools
        if tools is not None and not (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
            raise EpisodeError(f'AGENTENV_TOOLS: {tools_text!r} is not a JSON list of tool names, e.g. ["get_ticket"]')
        return task, seed, None if tools is None else list(tools)

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The next assistant message, from the gateway's proxy (OpenAI chat completions)."""
        url = self._setting("AGL_OPENAI_BASE_URL").rstrip("/") + "/chat/completions"
        body = {"model": self.model, "messages": messages, "tools": tools}
        reply = await asyncio.to_thread(_post, url, body, self.environ.get("AGL_KEY", ""), self.timeout)
        message: dict[str, Any] = reply["choices"][0]["message"]
        return {k: v for k, v in message.items() if v is not None}

    def report(self, played: Trajectory) -> None:
        """The reward event the trainer reads (its `value`), the episode's details beside it in the same event
        (Agent Lightning keeps an event's whole data; its trainer reads `value`)."""
        reason = "passed" if played.info.get("passed") else ("truncated" if played.truncated else "graded")
        details = {
            "score": played.score,
            "passed": bool(played.info.get("passed")),
            "truncated": played.truncated,
            "trajectory_digest": played.trajectory_digest,
            "turns": sum(1 for m in played.messages if m["role"] == "assistant"),
        }
        data = {"value": played.reward, "source": "agentenv", "reason": reason, "agentenv": details}
        _post(
            self._setting("AGL_EVENT_URL"), {"event_type": "reward", "data": data}, self.environ.get("AGL_KEY", ""), 60
        )

    async def run(self) -> Trajectory:
        """Play the episode through the proxy and report its reward (Agent Lightning awaits this)."""
        task, seed, tools = self.chosen_task()
        self._setting("AGL_EVENT_URL")  # refused before the episode, not after it
        played = await rollout(self.complete, task, seed, max_turns=self.max_turns, tools=tools)
        await asyncio.to_thread(self.report, played)
        return played
