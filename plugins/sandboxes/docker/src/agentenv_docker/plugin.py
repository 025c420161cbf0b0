"""Entry module of `agentenv-docker`: the `docker` sandbox provider, the `run_docker_container` and
`run_container_unit_tests_verifier` steps and the `agentenv docker` command. Nothing heavy is imported here;
classes are registered by name (`ClassRef`) and imported when a run uses them."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_sandbox_providers() -> list[Any]:
    """`docker`: containers on the local engine, one private network each, labelled and prunable."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("docker", "agentenv_docker.provider:DockerProvider"),
    ]


@hookimpl
def agentenv_register_steps() -> list[Any]:
    """`run_docker_container`: build an image from a context in the bundle, run it, wait until it is ready;
    `run_container_unit_tests_verifier`: score a test command run in such a container."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("run_docker_container", "agentenv_docker.step:RunDockerContainer"),
        ClassRef("run_container_unit_tests_verifier", "agentenv_docker.unit_tests:RunContainerUnitTestsVerifier"),
    ]


@hookimpl
def agentenv_register_cli_commands() -> list[Any]:
    """`agentenv docker`: build the base image, prune leftovers of crashed runs."""
    from agentenv.contracts import CliCommand

    return [CliCommand("docker", "Docker sandboxes: build the base image, prune leftovers.", "agentenv_docker.cli:app")]
