"""TRL's two ways to reward from a task: an `environment_factory` class, and a reward function.

`trl_environment(task)` builds the class `GRPOTrainer(environment_factory=…)` wants: its public methods are the
role's tools, each typed and documented from the tool's JSON Schema (TRL renders tools from Python type hints
and Google-style docstrings, through transformers' `get_json_schema`); `reset(**row)` starts a fresh fork of the
task's start (the row's `seed` column picks the seed) and `get_reward()` grades the episode with the task's
verifiers. The model's closing text never reaches an environment in TRL's loop, so the episode is graded with an
empty answer unless the model called `submit_answer` (a task whose verifiers read the answer needs that tool).
On a task with a simulated user, `reset` returns the user's opening (TRL appends it to the row's prompt) and the
class has a `message_user` tool: the model talks to the user through it, and the user's stop ends the episode.

`TaskReward(task)` is the reward-function form (`reward_funcs=[TaskReward(…)]`): each conversational completion
is replayed into a fresh fork of the start and rewarded with the verifiers' score.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence
from typing import Any

from agentenv_rl.adapters.chat import apply_assistant, row_messages
from agentenv_rl.adapters.starts import base_episode, fresh_episode
from agentenv_rl.adapters.typed import docstring, keyword_parameters
from agentenv_rl.episode import Episode, StepResult, Template
from agentenv_rl.split import EpisodeError

RESERVED = frozenset({"reset", "get_reward", "message_user"})
"""Method names TRL reads as the environment's own, never as tools."""


def _tool_method(tool: dict[str, Any]) -> Any:
    """A method `name(self, **arguments)` that calls the tool in the environment's episode."""
    name = tool["name"]
    required = set(tool["inputSchema"].get("required", []))
    arguments_of = keyword_parameters(tool, RESERVED)

    def call(self: AgentEnvTrlEnvironment, **arguments: Any) -> str:
        return self._call(name, {k: v for k, v in arguments.items() if v is not None or k in required})

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *arguments_of]
    call.__name__ = call.__qualname__ = name
    call.__doc__ = docstring(tool)
    call.__annotations__ = {**{p.name: p.annotation for p in arguments_of}, "return": str}
    call.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    return call


class AgentEnvTrlEnvironment:
    """The base of the classes `trl_environment` builds: one episode per instance, reset per rollout. Every public
    method is a tool to TRL, so the helpers are private."""

    task: str | Template
    """What `trl_environment` was given: BUNDLE[:TASK], a folder, a file, or a prepared Template."""
    offered: tuple[str, ...] | None = None
    short_descriptions: bool = False

    def __init__(self) -> None:
        self.episode: Episode | None = None
        self.final: StepResult | None = None

    def reset(self, seed: int | None = None, **row: Any) -> str | None:
        """A fresh fork of the task's start for `seed` (the dataset's `seed` column, else the task's own). On a task
        with a simulated user, the user's opening, which TRL appends to the row's (empty) last prompt message."""
        chosen = None if seed is None else int(seed)
        episode = fresh_episode(self.task, chosen, tools=self.offered, short_descriptions=self.short_descriptions)
        self.episode, self.final = episode, None
        return episode.opening() if episode.has_user else None

    def _call(self, tool: str, arguments: dict[str, Any]) -> str:
        """Run one tool call; the result (or error) as the JSON text the model reads."""
        episode = self._episode()
        if episode.done:
            return json.dumps({"ok": False, "error": {"code": "episode_over", "message": "the episode has ended"}})
        stepped = episode.step({"tool": tool, "arguments": arguments})
        if stepped.terminated or stepped.truncated:
            self.final = stepped
        outcome = {k: stepped.observation[k] for k in ("ok", "result", "error") if k in stepped.observation}
        return json.dumps(outcome, default=str)

    def submit_answer(self, answer: str) -> str:
        """Give your final answer: it ends the episode and is graded.

        Args:
            answer: Your final answer to the task.
        """
        episode = self._episode()
        if not episode.done:
            self.final = episode.step({"answer": answer})
        return json.dumps({"ok": True, "result": "answer recorded"})

    def _message_user(self, message: str) -> str:
        episode = self._episode()
        if episode.done:
            return json.dumps({"ok": False, "error": {"code": "episode_over", "message": "the conversation has ended"}})
        stepped = episode.step({"say": message})
        if stepped.terminated or stepped.truncated:
            self.final = stepped
        return str(stepped.observation.get("text", ""))

    def get_reward(self) -> float:
        """The task's verifiers' score of the episode (graded with an empty answer if none was submitted)."""
        episode = self._episode()
        if self.final is None:
            self.final = episode.step({"answer": ""})
        return float(self.final.reward)

    def _episode(self) -> Episode:
        if self.episode is None:
            raise EpisodeError("reset() the environment before calling its tools")
        return self.episode


def message_user(self: AgentEnvTrlEnvironment, message: str) -> str:
    """Send a message to the user; returns the user's reply. The conversation ends when the user ends it.

    Args:
        message: What you say to the user.
    """
    return self._message_user(message)


def trl_environment(
    task: str | Template,
    seed: int | None = None,
    *,
    tools: Sequence[str] | None = None,
    short_descriptions: bool = False,
) -> type[AgentEnvTrlEnvironment]:
    """The `environment_factory` class for `task`: `GRPOTrainer(environment_factory=trl_environment(TASK))`;
    `tools=[…]` offers only those tools, `short_descriptions` cuts descriptions to a sentence (fewer tokens)."""
    offered = None if tools is None else tuple(tools)
    base = base_episode(task, seed, tools=offered, short_descriptions=short_descriptions)
    methods = {tool["name"]: _tool_method(tool) for tool in base.tools() if tool["name"] != "submit_answer"}
    if base.has_user:  # the model's text never reaches an environment in TRL: it talks to the user by a tool
        methods["message_user"] = message_user
    template = task if isinstance(task, Template) else None
    title = (template.task.name if template else str(task)).replace("-", "_").replace(":", "_").replace("/", "_")
    attributes = {"task": task, "offered": offered, "short_descriptions": short_descriptions}
    return type(f"AgentEnv_{title}", (AgentEnvTrlEnvironment,), {**attributes, **methods})


def trl_rows(task: str | Template, seeds: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """Dataset rows for TRL (`datasets.Dataset.from_list`): the task's prompt as a user message and its `seed`."""
    rows = []
    chosen: list[int | None] = list(seeds) if seeds else [None]
    for seed in chosen:
        episode = base_episode(task, seed)
        rows.append({"prompt": row_messages(episode), "seed": episode.seed})
    return rows


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
