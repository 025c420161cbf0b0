"""The Docker sandbox's container layer commit, on the real engine: what commands change outside the tree (a
package pip installs, a tool in /usr/local/bin) goes with a snapshot and a fork, stays out of the parent after
the fork and out of the fork after it, and a reset drops it; steps that change only the tree commit nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime import Artifact
from agentenv_workspace import container, layers
from agentenv_workspace.env import WorkspaceEnv, state_of

PIP = 'python3 "$(echo /usr/share/python-wheels/pip-*.whl)/pip"'
"""Debian's pip wheel (python3-venv brings it), run from the wheel: the base image has no pip installed."""
WHEEL = "greetlib-1.0-py3-none-any.whl"


@pytest.fixture(autouse=True)
def _docker_root(docker_engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from agentenv_docker.api import ensure_base_image

    ensure_base_image(log=lambda message: None)
    monkeypatch.setenv(layers.ROOT_VARIABLE, str(tmp_path / "root"))
    yield
    layers.store().close()
    assert layers.mounts_under(tmp_path) == []
    assert ours("containers") == [] and ours("images") == []  # the store's close removed its commits too


def ours(kind: str) -> list[Any]:
    """This process's workspace containers, or its committed images."""
    from agentenv_docker.api import engine, owner_labels

    owner = f"agentenv.owner.pid={owner_labels()['agentenv.owner.pid']}"
    if kind == "containers":
        return list(engine().containers.list(all=True, filters={"label": [f"{container.LABEL}=1", owner]}))
    return list(engine().images.list(filters={"label": [f"{container.COMMIT_LABEL}=1", owner]}))


def wheel(path: Path) -> None:
    """A real wheel of a one-module package (what `pip wheel` writes for it), with its RECORD's hashes."""
    files = {
        "greetlib/__init__.py": b"def hello():\n    return 'hello from greetlib'\n",
        "greetlib-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: greetlib\nVersion: 1.0\n",
        "greetlib-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("greetlib-1.0.dist-info/RECORD,,")
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("greetlib-1.0.dist-info/RECORD", "\n".join(record) + "\n")


def docker_workspace(tmp_path: Path, **settings: Any) -> WorkspaceEnv:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("print('app')\n")
    wheel(repo / WHEEL)
    spec = tmp_path / "repo.json"
    spec.write_text(json.dumps({"name": "repo", "env": "workspace", "version": "1", "data": {"folder": "repo"}}))
    env = WorkspaceEnv({"sandbox": "docker", **settings})
    env.load(Artifact.from_file(spec))
    return env


def run(env: WorkspaceEnv, command: str) -> tuple[int, str]:
    result, error = env.call("exec", {"command": command})
    assert error is None, error
    return result["exit_code"], result["output"].strip()


def test_a_fork_carries_a_pip_installed_package_and_a_reset_drops_it(tmp_path: Path) -> None:
    env = docker_workspace(tmp_path)
    imports = "python3 -c 'import greetlib; print(greetlib.hello())'"
    assert run(env, imports)[0] != 0
    code, output = run(env, f"{PIP} install --no-index --no-deps --no-cache-dir --break-system-packages {WHEEL}")
    assert code == 0, output
    assert run(env, imports) == (0, "hello from greetlib")
    assert run(env, "ls")[1].split() == ["app.py", WHEEL]  # the install left the tree as it was

    fork = env.fork()
    _, image = state_of(fork.snapshot())
    assert image and container.known_image(image) and len(ours("images")) == 1
    assert run(fork, imports) == (0, "hello from greetlib")  # a container started from the commit

    assert run(env, "echo parent > /usr/local/bin/later")[0] == 0  # the parent goes on: not in the fork
    assert run(fork, "test -e /usr/local/bin/later")[0] == 1
    assert run(fork, f"{PIP} uninstall -y --break-system-packages greetlib")[0] == 0  # nor the fork's in it
    assert run(env, imports) == (0, "hello from greetlib")
    assert run(fork, imports)[0] != 0

    env.reset()
    assert run(env, imports)[0] != 0
    assert run(env, "test -e /usr/local/bin/later")[0] == 1
    fork.close()
    env.close()


def test_steps_that_change_only_the_tree_commit_nothing(tmp_path: Path) -> None:
    env = docker_workspace(tmp_path, warm_pool=1)
    assert run(env, "echo changed > app.py && mkdir -p /tmp/scratch && rmdir /tmp/scratch")[0] == 0
    fork = env.fork()
    assert state_of(fork.snapshot()) == (fork._layers, "")  # the tree's layers only: the fast path
    assert run(fork, "cat app.py") == (0, "changed")
    assert ours("images") == []
    fork.close()
    env.close()


def test_a_warm_pool_container_is_committed_and_a_fork_of_the_fork_reuses_the_commit(tmp_path: Path) -> None:
    env = docker_workspace(tmp_path, warm_pool=1)
    tool = "printf '#!/bin/sh\\necho tool $1\\n' > /usr/local/bin/tool && chmod +x /usr/local/bin/tool"
    assert run(env, tool)[0] == 0
    first = env.fork()
    assert run(first, "tool one; pwd; cat app.py") == (0, "tool one\n/workspace\nprint('app')")
    again = env.fork()  # nothing changed since: the same commit
    assert state_of(again.snapshot())[1] == state_of(first.snapshot())[1]
    second = first.fork()  # the fork ran a command but changed nothing outside: its start image again
    assert state_of(second.snapshot())[1] == state_of(first.snapshot())[1]
    assert run(second, "tool two") == (0, "tool two")
    assert len(ours("images")) == 1
    saved = env.snapshot()
    assert run(env, "rm /usr/local/bin/tool")[0] == 0
    env.restore(saved)
    assert run(env, "tool back") == (0, "tool back")
    for each in (second, again, first, env):
        each.close()
