"""Shared fixtures of the docker tests: a reachable engine (else skip, saying why) and the base image.

The base image is built once per machine (debootstrap, a couple of minutes) and then reused; every test
that starts containers depends on `base_image`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from agentenv_testing.services import docker_engine_problem


@pytest.fixture(scope="session")
def base_image() -> str:
    problem = docker_engine_problem()
    if problem:
        pytest.skip(problem)
    from agentenv_docker.base_image import ensure_base_image

    return ensure_base_image(log=lambda message: print(f"[base image] {message}"))


@pytest.fixture
def provider(base_image: str) -> Iterator[object]:
    """A provider with default settings (not the config file); afterwards prunes what this process's tests left
    (the label names the process, so a concurrent test session on the same engine is never touched)."""
    from agentenv_docker.provider import DockerProvider

    made = DockerProvider({})
    yield made
    made.prune({"agentenv.test": f"docker-{os.getpid()}"})
