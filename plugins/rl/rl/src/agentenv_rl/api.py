"""The public API of agentenv-rl (other plugins import only this module).

`AgentEnvGym` is looked up on first use, because it imports gymnasium (an extra); the export's Parquet writer
imports pyarrow only when it writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentenv_rl.episode import Action, Episode, StepResult, Template, make
from agentenv_rl.policy import EpisodeTools, agent_of_kind, play
from agentenv_rl.split import EpisodeError
from agentenv_rl.vector import EpisodeBatch, LocalEpisodes, shares, split_actions, vector

if TYPE_CHECKING:
    from agentenv_rl.gym_env import AgentEnvGym as AgentEnvGym

__all__ = [
    "Action",
    "AgentEnvGym",
    "Episode",
    "EpisodeBatch",
    "EpisodeError",
    "EpisodeTools",
    "LocalEpisodes",
    "StepResult",
    "Template",
    "agent_of_kind",
    "make",
    "play",
    "shares",
    "split_actions",
    "vector",
]


def __getattr__(name: str) -> Any:
    if name != "AgentEnvGym":
        raise AttributeError(f"module 'agentenv_rl.api' has no attribute {name!r}")
    from agentenv_rl.gym_env import AgentEnvGym

    return AgentEnvGym
