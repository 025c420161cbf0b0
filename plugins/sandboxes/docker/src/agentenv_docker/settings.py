"""Settings of the docker provider (`[plugins.agentenv-docker.docker]` in `.agentenv/config.toml`) and shared names."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DIST = "agentenv-docker"
DEFAULT_BASE = "agentenv/base:py3.11-bookworm"

MANAGED = "agentenv.managed"
"""Label on every container, network and volume this plugin makes; `prune` only ever touches these."""
RUN = "agentenv.run"
SANDBOX = "agentenv.sandbox"
DEADLINE = "agentenv.deadline"
"""Unix time (seconds) after which a sandbox created with `ttl_seconds` may be pruned."""


def is_local_base(image: str) -> bool:
    """Whether `image` is a base image this plugin builds itself from a Debian mirror (`agentenv/base:…`)."""
    return image.split(":", 1)[0] == DEFAULT_BASE.split(":", 1)[0]


def build_command(image: str) -> str:
    """The command that builds base image `image`."""
    tag = "" if image == DEFAULT_BASE else f" --tag {image}"
    return f"python -m agentenv_docker.base_image{tag}"


class DockerSettings(BaseModel):
    """How the provider talks to docker and what it starts sandboxes from."""

    model_config = ConfigDict(extra="forbid")

    base_image: str = Field(
        DEFAULT_BASE,
        description="Image used when a spec names none. Users with a registry may set e.g. `python:3.12-slim`.",
    )
    build_base: bool = Field(
        True,
        description="Build `base_image` from a Debian mirror when it is missing (needs root and debootstrap); "
        "when false, a missing base image is refused with the command that builds it.",
    )
    pull: bool = Field(True, description="Try to pull a spec's image that is not present locally.")
    workdir: str = Field("/sandbox", description="Working folder of commands; relative file paths resolve here.")
    publish_host: str = Field("127.0.0.1", description="Host address that published ports bind to.")
    docker_host: str | None = Field(None, description="Docker engine URL; None = DOCKER_HOST or the local socket.")
    stop_timeout: int = Field(2, ge=0, description="Seconds a container gets to stop before it is killed.")

    @classmethod
    def load(cls, given: DockerSettings | dict[str, Any] | None = None) -> DockerSettings:
        """`given`, else the `[plugins.agentenv-docker.docker]` table of the config file (defaults when none)."""
        if isinstance(given, DockerSettings):
            return given
        if given is None:
            from agentenv.config import load_config

            given = load_config().plugin_settings(DIST).get("docker", {})
        return cls.model_validate(given)
