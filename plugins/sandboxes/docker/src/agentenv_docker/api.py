"""The public API of agentenv-docker for other plugins: import from here, not from the other modules.

Other distributions that use it declare it (agentenv-steps does, as its `docker` extra; agentenv-aws and
agentenv-gcp do, for their image stores' pushes and pulls).
"""

from agentenv_docker.archives import archive_digest, content_tag, engine, pull_archive, push_archive
from agentenv_docker.base_image import ensure_base_image
from agentenv_docker.images import ImageBuildError, build_image, ensure_world_image
from agentenv_docker.owner import live_owner, owner_labels, sandbox_labels

__all__ = [
    "ImageBuildError",
    "archive_digest",
    "build_image",
    "content_tag",
    "engine",
    "ensure_base_image",
    "ensure_world_image",
    "live_owner",
    "owner_labels",
    "pull_archive",
    "push_archive",
    "sandbox_labels",
]
