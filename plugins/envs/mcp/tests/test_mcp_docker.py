"""The image form on the real Docker engine: the world runs the server as `docker run -i --rm IMAGE`, restarts it
on reset and leaves no container behind. The image is built here, FROM agentenv-docker's local base image (there
is no registry), holding the hand-written stdio server, and removed at the end."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv_mcp.api import DOCKER_LABEL, build_spec, close_servers, start_env
from agentenv_runtime import World

FAULTY = Path(__file__).with_name("faulty_server.py")


def _engine_problem() -> str | None:
    if shutil.which("docker") is None:
        return "no docker CLI"
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60)
    return None if info.returncode == 0 else f"no docker engine: {info.stderr.strip()[:200]}"


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    problem = _engine_problem()
    if problem:
        pytest.skip(problem)
    from agentenv_docker.api import ensure_base_image

    base = ensure_base_image(log=lambda message: print(f"[base image] {message}"))
    folder = tmp_path_factory.mktemp("mcp-image")
    shutil.copy(FAULTY, folder / "server.py")
    (folder / "Dockerfile").write_text(
        f'FROM {base}\nCOPY server.py /server.py\nENTRYPOINT ["python3", "/server.py"]\n'
    )
    tag = f"agentenv-mcp-test:{uuid.uuid4().hex[:12]}"
    built = subprocess.run(
        ["docker", "build", "-q", "-t", tag, str(folder)], capture_output=True, text=True, timeout=600
    )
    assert built.returncode == 0, built.stderr
    yield tag
    subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)  # only the image made here


def containers(name: str) -> list[str]:
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={DOCKER_LABEL}={name}"], capture_output=True, text=True, timeout=60
    )
    return listed.stdout.split()


def test_an_image_server_lives_and_dies_with_the_world(image: str) -> None:
    name = f"counter_{uuid.uuid4().hex[:8]}"
    env = start_env(build_spec(name, {"image": image, "args": ["ok"], "start_timeout": 120}, where="test"))
    world = World([env])
    try:
        assert len(containers(name)) == 1
        assert world.call("bump", {"by": 4}).ok
        assert world.call("count").result == {"calls": 4}
        world.reset()  # a new container: the server's initial state
        assert world.call("count").result == {"calls": 0}
        assert len(containers(name)) == 1
    finally:
        close_servers(world)
    assert containers(name) == []  # `--rm`: the stopped server's container is gone
