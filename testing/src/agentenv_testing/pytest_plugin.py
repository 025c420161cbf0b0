"""The pytest plugin of agentenv-testing (entry point `pytest11`, active wherever the package is installed).

Fixtures:
- `agentenv_config`: a temporary `.agentenv/config.toml` (local stores under the test's folder), named by
  `AGENTENV_CONFIG` for the test, loaded as a `Config`;
- `agentenv_host`: a fresh plugin host of the installed plugins, the process-wide one reset around the test;
- `plugin_host_of`: `agentenv_testing.hosts.host_of`, a host of exactly the plugin objects a test gives;
- `agentenv_runs`: a `TaskRuns` that runs tasks for real with temporary stores and reads back their records;
- `plugin_site`: a folder on `sys.path` where `agentenv_testing.installs.install_fixture_plugin` installs
  throw-away distributions that discovery finds like pip-installed ones (forgotten after the test);
- `agentenv_cli`: runs the `agentenv` dispatcher in this process with a fresh plugin host; returns a
  `CliResult` (exit code, stdout, stderr);
- `docker_engine`: skips the test, saying why, when no Docker engine answers (session-wide);
- `docker_registry`: Debian's `docker-registry` on a free loopback port with its own config and storage, for the
  session (skips when it is not installed, fails instead under `AGENTENV_CI=1`): the registry cloud image stores
  push to in tests.

Each test's teardown also fails when a thread is left blocked in `accept()` on a socket that was closed without a
shutdown (`agentenv_testing.lingering` says why that breaks other tests, much later); set
`AGENTENV_TESTING_ALLOW_LINGERING_ACCEPT=1` to turn the check off.

Only the standard library and the kernel are imported here, so having the plugin installed costs every
pytest session nothing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agentenv import PluginHost
    from agentenv.config import Config

    from agentenv_testing.installs import CliResult
    from agentenv_testing.services import LoopbackService
    from agentenv_testing.tasks import TaskRuns


CI_VAR = "AGENTENV_CI"
"""Set by `.ci/run`: the services its setup scripts install are required, never a reason to skip."""
LINGERING_VAR = "AGENTENV_TESTING_ALLOW_LINGERING_ACCEPT"
_lingering_reported: set[int] = set()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """After the test's fixtures are finalized: no thread it started may be left in `accept()` on a closed socket
    (each such thread is reported once, by the test after whose teardown it was first seen)."""
    result = yield
    if os.environ.get(LINGERING_VAR, "") in ("", "0"):
        from agentenv_testing.lingering import lingering_accepts

        stuck = {ident: text for ident, text in lingering_accepts().items() if ident not in _lingering_reported}
        if stuck:
            _lingering_reported.update(stuck)
            raise pytest.fail.Exception(
                f"{item.nodeid} left {'; '.join(stuck.values())} on a socket closed without a shutdown: call "
                "`sock.shutdown(socket.SHUT_RDWR)` before `sock.close()` (it wakes the thread), then join the "
                "thread. A signal can restart that accept() on whatever socket next gets the descriptor number, "
                f"and take another server's connections (see agentenv_testing.lingering; {LINGERING_VAR}=1 turns "
                "this check off)",
                pytrace=False,
            )
    return result


def write_local_config(folder: Path) -> Path:
    """`folder/.agentenv/config.toml` with the local stores under `folder`; returns its path."""
    path = folder / ".agentenv" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[plugins.agentenv-store-local.document]\n"
        f"path = {str(folder / 'records.sqlite3')!r}\n"
        "[plugins.agentenv-store-local.object]\n"
        f"root = {str(folder / 'objects')!r}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def agentenv_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    from agentenv.config import CONFIG_VAR, load_config

    path = write_local_config(tmp_path)
    monkeypatch.setenv(CONFIG_VAR, str(path))
    return load_config()


@pytest.fixture
def agentenv_host() -> Iterator[PluginHost]:
    from agentenv import get_host, reset_host

    reset_host()
    yield get_host()
    reset_host()


@pytest.fixture
def plugin_host_of() -> Callable[..., PluginHost]:
    from agentenv_testing.hosts import host_of

    return host_of


@pytest.fixture
def agentenv_runs(tmp_path: Path) -> TaskRuns:
    from agentenv_testing.tasks import TaskRuns

    return TaskRuns(tmp_path)


@pytest.fixture
def plugin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    from agentenv import installed_version, reset_host

    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    installed_version.cache_clear()
    reset_host()
    yield root
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(root)):
            del sys.modules[name]
    installed_version.cache_clear()
    reset_host()


@pytest.fixture
def agentenv_cli(capsys: pytest.CaptureFixture[str]) -> Iterator[Callable[..., CliResult]]:
    from agentenv import main, reset_host

    from agentenv_testing.installs import CliResult

    def run(*args: str) -> CliResult:
        reset_host()
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return CliResult(list(args), code, out, err)

    yield run
    reset_host()  # the next test must not see a host built under this test's env vars and sys.path


@pytest.fixture(scope="session")
def docker_engine() -> None:
    from agentenv_testing.services import docker_engine_problem

    problem = docker_engine_problem()
    if problem:
        pytest.skip(problem)


@pytest.fixture(scope="session")
def docker_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackService]:
    from agentenv_testing.services import docker_registry as make_registry

    service = make_registry(tmp_path_factory.mktemp("docker-registry"))
    if service is None:
        why = "docker-registry is not installed (apt-get install docker-registry: .ci/setup.d/30-docker-registry.sh)"
        if os.environ.get(CI_VAR):  # CI installs it: a skip there would hide tests it could have run
            pytest.fail(f"{why}; {CI_VAR} is set, so the tests that need it fail instead of skipping")
        pytest.skip(why)
    with service:
        yield service
