"""A real, minimal install: wheels of `agentenv-kernel` and `agentenv-store-local` into a fresh virtual
environment with its own pip — no workspace, no editable installs — and the plugin checks pass.

Where the dependencies come from (`pip_source_args`): the kernel needs pluggy, packaging, pydantic, typer,
httpx and their own dependencies. When the environment variable `AGENTENV_WHEELHOUSE` names a directory,
pip installs with `--no-index --find-links $AGENTENV_WHEELHOUSE`, so the test runs offline; the CI script
fills that directory beforehand with `pip download` of the kernel's dependencies (and `hatchling`, the
build backend, which the wheel builds then also take from there). Without the variable, pip and the build
use the package index as usual.

Marked `slow` (it builds two wheels and a virtual environment): `pytest -m slow kernel/tests`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = {"agentenv-kernel": ROOT / "kernel", "agentenv-store-local": ROOT / "plugins" / "stores" / "local"}
WHEELHOUSE_VAR = "AGENTENV_WHEELHOUSE"


def pip_source_args() -> list[str]:
    """`--no-index --find-links DIR` when AGENTENV_WHEELHOUSE names a directory, else nothing (use the index)."""
    wheelhouse = os.environ.get(WHEELHOUSE_VAR, "")
    if wheelhouse and Path(wheelhouse).is_dir():
        return ["--no-index", "--find-links", str(Path(wheelhouse).resolve())]
    return []


def build_wheel(project: Path, out: Path) -> Path:
    """One wheel of `project` into `out`, with uv when it is on PATH, else `python -m build`."""
    before = set(out.glob("*.whl"))
    uv = shutil.which("uv")
    if uv:
        command = [uv, "build", "--wheel", "--out-dir", str(out), *pip_source_args(), str(project)]
    else:
        command = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(project)]
    env = {**os.environ, "UV_PYTHON": sys.executable, "UV_PYTHON_DOWNLOADS": "never"}
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, f"{' '.join(command)}\n{proc.stdout}\n{proc.stderr}"
    (wheel,) = set(out.glob("*.whl")) - before
    return wheel


def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTENV_", "PYTHON", "VIRTUAL_ENV"))}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=900, **kwargs)  # type: ignore[call-overload, no-any-return]


@pytest.mark.slow
def test_kernel_and_store_local_wheels_install_and_check(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    wheels = {name: build_wheel(project, dist) for name, project in PROJECTS.items()}
    assert wheels["agentenv-kernel"].name.startswith("agentenv_kernel-")
    assert wheels["agentenv-store-local"].name.startswith("agentenv_store_local-")

    venv = tmp_path / "venv"
    made = run([sys.executable, "-m", "venv", str(venv)])
    assert made.returncode == 0, made.stderr
    python, agentenv = venv / "bin" / "python", venv / "bin" / "agentenv"
    install = run([str(python), "-m", "pip", "install", "--no-input", *pip_source_args(), *map(str, wheels.values())])
    assert install.returncode == 0, install.stdout + install.stderr

    frozen = run([str(python), "-m", "pip", "list", "--format", "json"])
    installed = {row["name"].lower() for row in json.loads(frozen.stdout)}
    assert {"agentenv-kernel", "agentenv-store-local"} <= installed
    assert not {"agentenv-slack", "agentenv-email"} & installed, "only what was asked for, no workspace"
    files = run([str(python), "-c", "import agentenv; print(agentenv.__file__)"], cwd=tmp_path)
    assert files.stdout.startswith(str(venv)), "the kernel is imported from the venv, not the workspace"

    check = run([str(agentenv), "plugin", "check", "--json"], cwd=tmp_path)
    assert (check.returncode, json.loads(check.stdout)) == (0, {"ok": True, "problems": []}), check.stderr

    listing = run([str(agentenv), "plugin", "list", "--json"], cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    plugins = {p["name"]: p for p in json.loads(listing.stdout)}
    assert set(plugins) == {"kernel", "store-local"}
    assert all(p["status"] == "ok" for p in plugins.values())
    assert plugins["store-local"]["distribution"] == "agentenv-store-local"
    assert plugins["store-local"]["kernel_range"]
    assert plugins["store-local"]["contributes"]["stores"]

    help_ = run([str(agentenv), "--help"], cwd=tmp_path)
    assert help_.returncode == 0 and "plugin" in help_.stdout
    envs = run([str(agentenv), "env", "list"], cwd=tmp_path)
    assert envs.returncode == 0 and "No envs installed" in envs.stdout
