"""Real third-party MCP servers from PyPI, each in a venv of its own (they pin their own `mcp`, not ours).

Where they come from: `AGENTENV_WHEELHOUSE/mcp-servers` when `.ci/setup.d/40-mcp-servers.sh` filled it (offline
install), else the package index. `mcp-server-sqlite` 2025.4.25 is built for `mcp<2` (it fails at start with
mcp 2), so it gets a venv of its own with `mcp<2`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv_testing.wheels import run

SERVERS = ["mcp-server-git==2026.10.19", "mcp-server-time==2026.10.19"]
SQLITE = ["mcp-server-sqlite==2025.4.25", "mcp>=1.25,<2"]


def _sources() -> list[str]:
    folder = Path(os.environ.get("AGENTENV_WHEELHOUSE", "")) / "mcp-servers"
    if os.environ.get("AGENTENV_WHEELHOUSE") and folder.is_dir():
        return ["--no-index", "--find-links", str(folder)]
    return []


def _venv(folder: Path, requirements: list[str]) -> Path:
    made = run([sys.executable, "-m", "venv", str(folder)])
    assert made.returncode == 0, made.stderr
    pip = [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-input", *_sources()]
    installed = run([*pip, *requirements], timeout=600)
    assert installed.returncode == 0, f"{requirements}: {installed.stdout}\n{installed.stderr}"
    return folder / "bin"


@pytest.fixture(scope="session")
def servers_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/ of a venv holding mcp-server-git and mcp-server-time."""
    return _venv(tmp_path_factory.mktemp("mcp-servers") / "venv", SERVERS)


@pytest.fixture(scope="session")
def sqlite_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/ of a venv holding mcp-server-sqlite (with the `mcp<2` it was built for)."""
    return _venv(tmp_path_factory.mktemp("mcp-sqlite") / "venv", SQLITE)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """A git repository with one commit, for mcp-server-git."""
    path = tmp_path / "repo"
    path.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for command in (["git", "init", "-q", "-b", "main"], ["git", "add", "."], ["git", "commit", "-qm", "Initial"]):
        if command[1] == "add":
            (path / "README.md").write_text("# shop\n")
        subprocess.run(command, cwd=path, check=True, env=env)
    yield path
