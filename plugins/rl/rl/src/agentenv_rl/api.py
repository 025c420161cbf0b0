"""The public API of agentenv-rl (other plugins import only this module).

Heavy pieces load on first use: `AgentEnvGym` imports gymnasium, the export's Parquet writer pyarrow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentenv_rl.episode import Action as Action
    from agentenv_rl.episode import Episode as Episode
    from agentenv_rl.episode import StepResult as StepResult
    from agentenv_rl.episode import Template as Template
    from agentenv_rl.episode import make as make
    from agentenv_rl.gym_env import AgentEnvGym as AgentEnvGym
    from agentenv_rl.policy import EpisodeTools as EpisodeTools
    from agentenv_rl.policy import agent_of_kind as agent_of_kind
    from agentenv_rl.policy import play as play
    from agentenv_rl.split import EpisodeError as EpisodeError
    from agentenv_rl.vector import EpisodeBatch as EpisodeBatch
    from agentenv_rl.vector import LocalEpisodes as LocalEpisodes
    from agentenv_rl.vector import shares as shares
    from agentenv_rl.vector import vector as vector

_HOMES = {
    "Action": "agentenv_rl.episode",
    "Episode": "agentenv_rl.episode",
    "StepResult": "agentenv_rl.episode",
    "Template": "agentenv_rl.episode",
    "make": "agentenv_rl.episode",
    "AgentEnvGym": "agentenv_rl.gym_env",
    "EpisodeTools": "agentenv_rl.policy",
    "agent_of_kind": "agentenv_rl.policy",
    "play": "agentenv_rl.policy",
    "EpisodeError": "agentenv_rl.split",
    "EpisodeBatch": "agentenv_rl.vector",
    "LocalEpisodes": "agentenv_rl.vector",
    "shares": "agentenv_rl.vector",
    "vector": "agentenv_rl.vector",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module 'agentenv_rl.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
