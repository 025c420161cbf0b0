"""Servers under test run in a scratch folder (their run stores live there), without outer plugin filters; OpenEnv's
own client runs from a separate venv."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from agentenv_testing.installs import AGENTENV_VARS

AGENTENV = Path(sys.executable).with_name("agentenv")
OPENENV_CORE = "openenv-core==0.3.0"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start `agentenv openenv serve ARGS` on a free port; returns its URL once it says it is serving."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> str:
        env = {k: v for k, v in os.environ.items() if k not in AGENTENV_VARS}
        process = subprocess.Popen(
            [str(AGENTENV), "openenv", "serve", *args, "--port", "0"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        started.append(process)
        deadline = time.monotonic() + 60
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line and process.poll() is not None:
                raise AssertionError(f"the server exited with {process.returncode}")
            found = re.search(r"serving on (http://\S+)", line)
            if found:
                return found.group(1)
        raise AssertionError("the server did not start within 60 s")

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def openenv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with OpenEnv's client only, installed offline from the wheelhouse `.ci/run` fills."""
    wheelhouse = Path(os.environ.get("AGENTENV_WHEELHOUSE", "/nonexistent"))
    if not any(wheelhouse.glob("openenv_core-*.whl")):
        pytest.skip("OpenEnv's client wheels are not in $AGENTENV_WHEELHOUSE (.ci/run downloads them)")
    venv = tmp_path_factory.mktemp("openenv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(wheelhouse), OPENENV_CORE],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    return python
