"""The public API of agentenv-rl (other plugins import only this module).

`AgentEnvGym` is looked up on first use, because it imports gymnasium (an extra), and so are the adapters built
on a trainer's own package (`AgentEnvTextEnv`, `skyrl_rows` and `register_skyrl` import skyrl_gym, `art_rollout`
imports art, `AgentEnvTaskset` imports verifiers, `AgentEnvAgentLoop` and `verl_rows` import verl;
`AgentLightningAgent` imports nothing of Agent Lightning but is loaded on use as well); the export's Parquet
writer imports pyarrow only when it writes. The other adapters import nothing outside agentenv.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agentenv_runtime import openai_tools

from agentenv_rl.adapters.chat import aapply_assistant, apply_assistant, first_messages, row_messages
from agentenv_rl.adapters.rollout import Trajectory, rollout
from agentenv_rl.adapters.starts import base_episode, fresh_episode
from agentenv_rl.adapters.text import assistant_message, tools_prompt
from agentenv_rl.adapters.trl import AgentEnvTrlEnvironment, TaskReward, trl_environment, trl_rows
from agentenv_rl.episode import Action, Episode, StepResult, Template, make
from agentenv_rl.policy import EpisodeTools, agent_of_kind, play
from agentenv_rl.split import EpisodeError
from agentenv_rl.vector import EpisodeBatch, LocalEpisodes, shares, split_actions, vector

if TYPE_CHECKING:
    from agentenv_rl.adapters.agent_lightning import AgentLightningAgent as AgentLightningAgent
    from agentenv_rl.adapters.agent_lightning import agent_lightning_rows as agent_lightning_rows
    from agentenv_rl.adapters.art import art_rollout as art_rollout
    from agentenv_rl.adapters.skyrl import AgentEnvTextEnv as AgentEnvTextEnv
    from agentenv_rl.adapters.skyrl import register as register_skyrl
    from agentenv_rl.adapters.skyrl import skyrl_rows as skyrl_rows
    from agentenv_rl.adapters.verifiers_v1 import AgentEnvTaskset as AgentEnvTaskset
    from agentenv_rl.adapters.verl_loop import AgentEnvAgentLoop as AgentEnvAgentLoop
    from agentenv_rl.adapters.verl_loop import verl_rows as verl_rows
    from agentenv_rl.gym_env import AgentEnvGym as AgentEnvGym

_LAZY = {
    "AgentLightningAgent": ("agentenv_rl.adapters.agent_lightning", "AgentLightningAgent"),
    "agent_lightning_rows": ("agentenv_rl.adapters.agent_lightning", "agent_lightning_rows"),
    "AgentEnvAgentLoop": ("agentenv_rl.adapters.verl_loop", "AgentEnvAgentLoop"),
    "verl_rows": ("agentenv_rl.adapters.verl_loop", "verl_rows"),
    "AgentEnvGym": ("agentenv_rl.gym_env", "AgentEnvGym"),
    "art_rollout": ("agentenv_rl.adapters.art", "art_rollout"),
    "AgentEnvTextEnv": ("agentenv_rl.adapters.skyrl", "AgentEnvTextEnv"),
    "register_skyrl": ("agentenv_rl.adapters.skyrl", "register"),
    "skyrl_rows": ("agentenv_rl.adapters.skyrl", "skyrl_rows"),
    "AgentEnvTaskset": ("agentenv_rl.adapters.verifiers_v1", "AgentEnvTaskset"),
}

__all__ = [
    "Action",
    "AgentEnvAgentLoop",
    "AgentEnvGym",
    "AgentEnvTaskset",
    "AgentEnvTextEnv",
    "AgentEnvTrlEnvironment",
    "AgentLightningAgent",
    "Episode",
    "EpisodeBatch",
    "EpisodeError",
    "EpisodeTools",
    "LocalEpisodes",
    "StepResult",
    "TaskReward",
    "Template",
    "Trajectory",
    "aapply_assistant",
    "agent_lightning_rows",
    "agent_of_kind",
    "apply_assistant",
    "art_rollout",
    "assistant_message",
    "base_episode",
    "first_messages",
    "fresh_episode",
    "make",
    "openai_tools",
    "play",
    "register_skyrl",
    "rollout",
    "row_messages",
    "shares",
    "skyrl_rows",
    "split_actions",
    "tools_prompt",
    "trl_environment",
    "trl_rows",
    "vector",
    "verl_rows",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'agentenv_rl.api' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    return getattr(importlib.import_module(module), attribute)
