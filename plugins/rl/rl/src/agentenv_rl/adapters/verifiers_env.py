"""A verifiers-style (prime-rl) multi-turn tool environment over a task.

verifiers' `MultiTurnEnv` loop asks the environment for `setup_state(state)`, `env_response(messages, state)`
after each model message, `is_completed(messages, state)`, and scores with a rubric; this class has those
methods with those shapes, so a verifiers environment can delegate to it (verifiers itself is not a dependency:
it is not installable offline here). State holds the episode; the reward is the task's verifiers' score.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentenv_rl.adapters.chat import apply_assistant, openai_tools
from agentenv_rl.episode import Episode, Template

Messages = list[dict[str, Any]]
State = dict[str, Any]


class AgentEnvToolEnv:
    def __init__(self, task: str | Template, *, seeds: list[int] | None = None, max_turns: int = 64) -> None:
        self.template = task if isinstance(task, Template) else Template(task)
        self.seeds = seeds or [self.template.default_seed()]
        self.max_turns = max_turns
        self._bases: dict[int, Episode] = {}

    def _base(self, seed: int) -> Episode:
        if seed not in self._bases:
            self._bases[seed] = Episode(self.template, seed)
        return self._bases[seed]

    def dataset(self) -> list[dict[str, Any]]:
        """One row per seed, in verifiers' shape: `prompt` messages and `info` (seed, OpenAI tools)."""
        rows = []
        for seed in self.seeds:
            start = self.template.start(seed)
            rows.append(
                {
                    "prompt": [{"role": "user", "content": start.prompt}],
                    "info": {"seed": seed, "oai_tools": openai_tools(start.tools)},
                    "task": self.template.task.name,
                }
            )
        return rows

    async def setup_state(self, state: State) -> State:
        seed = int((state.get("info") or {}).get("seed", self.seeds[0]))
        episode = (await asyncio.to_thread(self._base, seed)).fork()  # a first seed's setup runs off the loop
        episode.reset()
        state.update(episode=episode, turn=0, reward=0.0, result=None)
        return state

    async def env_response(self, messages: Messages, state: State) -> tuple[Messages, State]:
        """Run the tool calls of the model's last message; a message without calls is its final answer."""
        episode: Episode = state["episode"]
        state["turn"] += 1
        replies, result = apply_assistant(episode, messages[-1])
        if result is None and state["turn"] >= self.max_turns:
            result = await episode.astep({"answer": ""})
        if result is not None:
            state.update(result=result, reward=result.reward, score=result.info.get("score"))
        return replies, state

    async def is_completed(self, messages: Messages, state: State) -> bool:
        return state.get("result") is not None

    async def score_rollout(self, messages: Messages, state: State) -> float:
        """The rubric: the task's verifiers' score of the finished episode (0 for an unfinished one)."""
        return float(state.get("reward") or 0.0)
