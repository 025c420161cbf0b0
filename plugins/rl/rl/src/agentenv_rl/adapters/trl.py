"""TRL's reward-function interface over a task: `GRPOTrainer(reward_funcs=[TaskReward("support-refund")])`.

TRL calls reward functions with the batch's `completions` (conversational: a list of messages each) and the
dataset's other columns as keyword arguments. Each completion is replayed into a fresh fork of the task's
start (its tool calls run against the world, its last text is the answer) and rewarded with the task's
verifiers' score. For live environment rollouts TRL's `rollout_func` talks to `agentenv openenv serve` through
OpenEnv's client, which `agentenv-openenv` is tested against.
"""

from __future__ import annotations

from typing import Any

from agentenv_rl.adapters.chat import apply_assistant
from agentenv_rl.episode import Episode, Template


class TaskReward:
    def __init__(self, task: str | Template) -> None:
        self.template = task if isinstance(task, Template) else Template(task)
        self.__name__ = f"agentenv_{self.template.task.name}"  # TRL names the reward in its logs by this
        self._bases: dict[int, Episode] = {}

    def _episode(self, seed: int | None) -> Episode:
        key = self.template.default_seed() if seed is None else int(seed)
        if key not in self._bases:
            self._bases[key] = Episode(self.template, key)
        episode = self._bases[key].fork()
        episode.reset()
        return episode

    def __call__(self, completions: list[Any], seed: list[int] | None = None, **kwargs: Any) -> list[float]:
        rewards = []
        for index, completion in enumerate(completions):
            episode = self._episode(seed[index] if seed else None)
            messages = completion if isinstance(completion, list) else [{"role": "assistant", "content": completion}]
            result = None
            for message in messages:
                if message.get("role") != "assistant":
                    continue
                _, result = apply_assistant(episode, message)
                if result is not None:
                    break
            if result is None:
                result = episode.step({"answer": ""})
            rewards.append(float(result.reward))
        return rewards
