"""The public API of agentenv-ray: batched episodes on Ray actors, and the runner class."""

from agentenv_ray.episodes import RayEpisodes
from agentenv_ray.runner import RayRunner

__all__ = ["RayEpisodes", "RayRunner"]
