"""The shared sandbox contract (agentenv_testing.sandboxes), run against the real docker engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentenv.contracts import SandboxProvider
from agentenv_docker.provider import DockerProvider
from agentenv_testing.sandboxes import SandboxProviderConformance

pytestmark = pytest.mark.usefixtures("base_image")


class TestDockerConformance(SandboxProviderConformance):
    image = None  # the provider's base image (agentenv/base:py3.11-bookworm, built by the fixture)
    supports_limits = True  # cpu and memory; disk_mb depends on the storage driver (test_docker_provider)
    network_modes = frozenset({"loopback"})  # network_mode none; `none` (no loopback) is refused

    def make_provider(self, tmp_path: Path) -> SandboxProvider:
        return DockerProvider({})
