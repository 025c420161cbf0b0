"""The public API of agentenv-docker for other plugins: import from here, not from the other modules.

Other distributions that use it declare it (agentenv-steps does, as its `docker` extra).
"""

from agentenv_docker.images import ensure_world_image

__all__ = ["ensure_world_image"]
