"""SkyRL's text environment over a task: `skyrl_gym`'s `BaseTextEnv`, which the trainer hands raw generated text.

SkyRL owns the loop: it calls `init(prompt)` once, then `step(text)` with each generation, and appends the
returned observations (chat messages) to the conversation. Here `init` starts a fresh fork of the task's start
and puts the role's tools in a system message (Hermes/Qwen `<tool_call>` format), `step` reads the text's tool
calls (`<tool_call>` blocks or OpenAI JSON), plays them, and answers with their results as tool messages; text
without a call is the final answer, graded by the task's verifiers (the reward), or on a task with a simulated
user a message to the user, whose reply is the observation (a user message) until the user ends the episode.
After `max_turns` generations the episode is graded as it stands.

A dataset row names the task in `extras` (`{"task": "support-refund", "seed": 7, "max_turns": 16}`);
`skyrl_rows(task, seeds)` writes such rows, and `register()` makes `env_class="agentenv"` known to
`skyrl_gym.make`. `skyrl_gym` is imported with this module, never by `agentenv_rl.api` until it is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentenv_runtime import openai_tools
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from agentenv_rl.adapters.chat import apply_assistant, opening_messages, row_messages
from agentenv_rl.adapters.starts import base_episode, fresh_episode
from agentenv_rl.adapters.text import assistant_message, tools_prompt
from agentenv_rl.episode import Episode, StepResult

ENV_CLASS = "agentenv"
DEFAULT_MAX_TURNS = 16


class AgentEnvTextEnv(BaseTextEnv):  # type: ignore[misc]  # skyrl_gym ships no type information
    """One episode of the task named in `extras["task"]` (seed `extras["seed"]`, else the task's own)."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        extras = dict(extras or {})
        if not extras.get("task"):
            raise ValueError('the SkyRL dataset row needs extras["task"]: BUNDLE[:TASK], a bundle folder or a file')
        self.task: str = str(extras["task"])
        self.seed: int | None = None if extras.get("seed") is None else int(extras["seed"])
        self.max_turns = int(extras.get("max_turns", DEFAULT_MAX_TURNS))
        self.episode: Episode | None = None
        self.final: StepResult | None = None

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The conversation to generate from: one system message (the task's system prompt, then the tools in the
        `<tool_call>` format), then the row's prompt (the task's own prompt when the row has none). On a task with a
        simulated user the conversation is this episode's: the user's opening, whatever the row says."""
        episode = self.episode = fresh_episode(self.task, self.seed)
        self.turns, self.final = 0, None
        messages = opening_messages(episode, prompt)
        given = [str(m["content"]) for m in messages if m.get("role") == "system"]
        system = "\n\n".join([*given, tools_prompt(openai_tools(episode.tools()))])
        return [{"role": "system", "content": system}, *(m for m in messages if m.get("role") != "system")], {
            "seed": episode.seed
        }

    def step(self, action: str) -> BaseTextEnvStepOutput:
        episode = self.episode
        if episode is None:
            raise ValueError("init() the environment before stepping it")
        self.turns += 1
        replies, final = apply_assistant(episode, assistant_message(action))
        if final is None and self.turns >= self.max_turns:
            final = episode.step({"answer": ""})
            final.terminated, final.truncated = False, True
        observations = [{"role": reply["role"], "content": reply["content"]} for reply in replies]
        if final is None:
            return BaseTextEnvStepOutput(observations=observations, reward=0.0, done=False, metadata={})
        self.final = final
        metadata = {"score": final.info.get("score"), "passed": final.info.get("passed"), "truncated": final.truncated}
        return BaseTextEnvStepOutput(observations=[], reward=float(final.reward), done=True, metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        final = self.final
        if final is None:
            return {"turns": self.turns}
        return {
            "turns": self.turns,
            "score": final.info.get("score") or 0.0,
            "passed": float(bool(final.info.get("passed"))),
        }


def skyrl_rows(
    task: str, seeds: Sequence[int] | None = None, *, max_turns: int = DEFAULT_MAX_TURNS
) -> list[dict[str, Any]]:
    """SkyRL dataset rows for `task`: the prompt, `env_class="agentenv"` and the `extras` the environment reads."""
    chosen: list[int | None] = list(seeds) if seeds else [None]
    rows = []
    for seed in chosen:
        episode = base_episode(task, seed)
        rows.append(
            {
                "prompt": row_messages(episode),
                "env_class": ENV_CLASS,
                "extras": {"task": task, "seed": episode.seed, "max_turns": max_turns},
            }
        )
    return rows


def register() -> None:
    """Make `skyrl_gym.make("agentenv", extras=…)` build `AgentEnvTextEnv` (idempotent)."""
    import skyrl_gym

    if ENV_CLASS not in skyrl_gym.registry:
        skyrl_gym.register(id=ENV_CLASS, entry_point=f"{__name__}:AgentEnvTextEnv")
