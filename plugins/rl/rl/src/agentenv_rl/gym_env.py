"""A `gymnasium.Env` over an episode (import this module only where gymnasium is installed).

Observations and actions are JSON text (ASCII, so they sit in a `Text` space): an observation is the episode's
observation dict; an action is `{"tool": …, "arguments": {…}}` or `{"answer": …}`, as text or as a dict.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium
from gymnasium import spaces

from agentenv_rl.episode import Episode, make
from agentenv_rl.split import EpisodeError

MAX_TEXT = 1 << 20


class AgentEnvGym(gymnasium.Env[str, str | Mapping[str, Any]]):
    """`gymnasium.make`-free wrapper: `AgentEnvGym("support-refund")` or `AgentEnvGym(episode=made)`."""

    metadata = {"render_modes": []}

    def __init__(self, target: str | None = None, *, episode: Episode | None = None, **options: Any) -> None:
        if (target is None) == (episode is None):
            raise ValueError("give a task target (BUNDLE[:TASK], folder or file) or an episode, not both")
        self.episode = episode if episode is not None else make(str(target), **options)
        self.observation_space = spaces.Text(MAX_TEXT, charset=string.printable)
        self.action_space = spaces.Text(MAX_TEXT, charset=string.printable)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        observation, info = self.episode.reset(seed=seed)
        return json.dumps(observation), info

    def step(self, action: str | Mapping[str, Any]) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """A malformed action (not JSON, or not a tool call or answer) is told back as an observation, as a
        model's malformed tool call would be, and left out of the world; the episode goes on."""
        try:
            chosen = json.loads(action) if isinstance(action, str) else action
            if not isinstance(chosen, Mapping):
                raise EpisodeError(f"an action is a JSON object, not {type(chosen).__name__}")
            observation, reward, terminated, truncated, info = self.episode.step(chosen)
        except (ValueError, EpisodeError) as exc:
            if isinstance(exc, EpisodeError) and self.episode.done:
                raise
            message = str(exc) if isinstance(exc, EpisodeError) else f"not JSON: {exc}"
            invalid = {"type": "invalid_action", "error": message}
            return json.dumps(invalid), 0.0, False, False, {"step": self.episode.step_count}
        return json.dumps(observation), reward, terminated, truncated, info

    def close(self) -> None:
        self.episode.close()
