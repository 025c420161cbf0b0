"""The RL tests run in a scratch folder (run records land in its `.agentenv/`), with no outer plugin filters."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentenv_testing.installs import AGENTENV_VARS


@pytest.fixture(autouse=True)
def _scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in AGENTENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


WORKSPACE = Path(__file__).resolve().parents[4]
MEMBERS = (
    "kernel",
    "runtime",
    "plugins/rl/rl",
    "plugins/bundles/support-desk",
    "plugins/envs/helpdesk",
    "plugins/envs/email",
    "plugins/envs/slack",
    "plugins/steps/steps",
    "plugins/agents/core",
    "plugins/stores/local",
    "plugins/sandboxes/local",
    "plugins/bundles/tau2",
    "plugins/envs/retail",
    "plugins/agents/model-standin",
)
"""The distributions support-refund and tau2-retail (a simulated user) run on, and the stand-in model the
examples answer with, installed (editable) beside a framework's own package."""


def _interpreter(version: str) -> str:
    """A Python `version` (3.11, 3.12…): on PATH if it runs (a pyenv shim may not), else pyenv's own build."""
    found = shutil.which(f"python{version}")
    if found and subprocess.run([found, "-c", ""], capture_output=True).returncode == 0:
        return found
    builds = sorted(Path.home().glob(f".pyenv/versions/{version}.*/bin/python"))
    if not builds:
        pytest.skip(f"Python {version} is not installed (neither python{version} on PATH nor a pyenv build)")
    return str(builds[-1])


def _uv() -> str | None:
    return shutil.which("uv") or next((str(p) for p in [Path.home() / ".local/bin/uv"] if p.exists()), None)


@pytest.fixture(scope="session")
def framework_python() -> Callable[..., Path]:
    """`framework_python(name, *requirements, python="3.11")`: the interpreter of a venv holding a framework's
    real published package and the agentenv distributions support-refund needs, made with uv (its shared cache)
    under ~/.cache/agentenv/framework-venvs and kept for reuse, keyed by the requirements and this checkout."""
    uv = _uv()
    if uv is None:
        pytest.skip("uv is not installed (./dev sync installs it)")
    root = Path(os.environ.get("AGENTENV_FRAMEWORK_VENVS", Path.home() / ".cache/agentenv/framework-venvs"))

    def make(name: str, *requirements: str, python: str = "3.11") -> Path:
        interpreter = _interpreter(python)
        key = hashlib.sha256(json.dumps([str(WORKSPACE), requirements, python, MEMBERS]).encode()).hexdigest()[:12]
        venv = root / f"{name}-{key}"
        done = venv / ".agentenv-ready"
        if done.exists():
            return venv / "bin" / "python"
        shutil.rmtree(venv, ignore_errors=True)
        env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
        made = subprocess.run([uv, "venv", "-q", "-p", interpreter, str(venv)], capture_output=True, text=True, env=env)
        assert made.returncode == 0, made.stderr[-2000:]
        editables = [arg for member in MEMBERS for arg in ("-e", str(WORKSPACE / member))]
        command = [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *requirements, *editables]
        installed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
        assert installed.returncode == 0, f"{' '.join(command)}\n{installed.stderr[-3000:]}"
        done.write_text("ok\n")
        return venv / "bin" / "python"

    return make


def _run_in(python: Path, code: str | Path, *args: str, timeout: float = 900) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in AGENTENV_VARS and k != "VIRTUAL_ENV"}
    program = [str(code)] if isinstance(code, Path) else ["-c", code]
    proc = subprocess.run(
        [str(python), *program, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=os.getcwd()
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture
def run_in() -> Callable[..., dict[str, Any]]:
    """`run_in(python, code, *args)`: run `code` (Python source, or a script's path) with a framework venv's
    interpreter in this test's scratch folder (no outer plugin filters); its last line of output is JSON, returned
    parsed."""
    return _run_in
