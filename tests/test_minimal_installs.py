"""Real, minimal installs: wheels of only the named distributions into a fresh virtual environment with its
own pip (no workspace, no editable installs), and what they promise works there:

- the kernel and one sandbox provider (`agentenv-docker`), no runtime: `plugin check` passes, `--help` works;
- the kernel, the runtime and what `hello` declares: `agentenv run hello` passes.

Where the dependencies come from (`agentenv_testing.wheels.pip_source_args`): when the environment variable
`AGENTENV_WHEELHOUSE` names a directory, pip installs with `--no-index --find-links $AGENTENV_WHEELHOUSE`, so the
test runs offline; the CI script fills that directory beforehand with `pip download` of what these installs need
(and `hatchling`, the build backend). Without the variable, pip and the build use the package index as usual.

Marked `slow` (it builds wheels and virtual environments): `pytest -m slow tests/test_minimal_installs.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentenv_testing.wheels import build_wheel, installed, run
from agentenv_testing.wheels import fresh_venv as venv_of
from first_party import projects

PROJECTS = projects(
    "agentenv-kernel", "agentenv-runtime", "agentenv-docker", "agentenv-store-local", "agentenv-slack",
    "agentenv-steps", "agentenv-agents", "agentenv-hello",
)  # fmt: skip


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    dist = tmp_path_factory.mktemp("dist")
    return {name: build_wheel(project, dist) for name, project in PROJECTS.items()}


def fresh_venv(tmp_path: Path, wheels: list[Path]) -> tuple[Path, Path]:
    """(python, agentenv) of a new venv holding exactly `wheels` and what they declare."""
    bin_dir = venv_of(tmp_path, wheels)
    return bin_dir / "python", bin_dir / "agentenv"


@pytest.mark.slow
def test_kernel_and_docker_without_the_runtime(tmp_path: Path, wheels: dict[str, Path]) -> None:
    python, agentenv = fresh_venv(tmp_path, [wheels["agentenv-kernel"], wheels["agentenv-docker"]])
    assert "agentenv-runtime" not in installed(python), "the docker provider must not need the runtime"
    check = run([str(agentenv), "plugin", "check", "--json"], cwd=tmp_path)
    assert (check.returncode, json.loads(check.stdout)) == (0, {"ok": True, "problems": []}), check.stderr
    listing = run([str(agentenv), "plugin", "list", "--json"], cwd=tmp_path)
    plugins = {p["name"]: p for p in json.loads(listing.stdout)}
    assert set(plugins) == {"docker"} and plugins["docker"]["status"] == "ok"
    assert plugins["docker"]["contributes"]["sandbox_providers"] == ["docker"]
    help_ = run([str(agentenv), "--help"], cwd=tmp_path)
    assert help_.returncode == 0 and "plugin" in help_.stdout and " run " not in help_.stdout
    missing = run([str(agentenv), "run", "hello"], cwd=tmp_path)
    assert missing.returncode == 2 and "no such command 'run'" in missing.stderr


@pytest.mark.slow
def test_kernel_runtime_and_what_hello_declares_run_hello(tmp_path: Path, wheels: dict[str, Path]) -> None:
    wanted = ["agentenv-kernel", "agentenv-runtime", "agentenv-slack", "agentenv-steps", "agentenv-agents"]
    wanted += ["agentenv-store-local", "agentenv-hello"]
    python, agentenv = fresh_venv(tmp_path, [wheels[name] for name in wanted])
    assert not {"agentenv-email", "agentenv-gateway", "agentenv-docker"} & installed(python)
    check = run([str(agentenv), "plugin", "check", "--json"], cwd=tmp_path)
    assert (check.returncode, json.loads(check.stdout)) == (0, {"ok": True, "problems": []}), check.stderr
    hello = run([str(agentenv), "run", "hello", "--json"], cwd=tmp_path)
    assert hello.returncode == 0, hello.stdout + hello.stderr
    assert "succeeded" in hello.stdout
