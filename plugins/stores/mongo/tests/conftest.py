"""MongoDB servers for these tests, each started once for the session on a free loopback port and stopped after it:
a real `mongod` when one is installed, and mongoeco's MongoDB wire-protocol server from PyPI in a venv of its own.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv_testing.pytest_plugin import CI_VAR
from agentenv_testing.services import LoopbackService, free_port

sys.path.insert(0, str(Path(__file__).parent))  # pytest runs in importlib mode: these tests import their helpers

from mongo_servers import MONGOD_VAR, NO_MONGOD, PASSWORD, SERVER, USER, mongoeco_problem, pings, url_of
from mongo_servers import mongoeco_python as make_mongoeco_python


@pytest.fixture(scope="session")
def mongod(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a real `mongod` (from PATH, or the binary AGENTENV_MONGOD names) with a temporary dbpath."""
    binary = os.environ.get(MONGOD_VAR) or shutil.which("mongod")
    if not binary:
        pytest.skip(NO_MONGOD)
    root = tmp_path_factory.mktemp("mongod")
    (root / "db").mkdir()
    port = free_port()
    argv = [binary, "--port", str(port), "--bind_ip", "127.0.0.1", "--dbpath", str(root / "db"), "--nounixsocket"]
    argv += ["--wiredTigerCacheSizeGB", "0.25"]
    with LoopbackService(argv, log=root / "mongod.log", port=port, ready=pings(url_of(port)), start_seconds=120):
        yield url_of(port)


@pytest.fixture(scope="session")
def mongoeco_python() -> Path:
    """The interpreter of mongoeco's venv."""
    why = mongoeco_problem()
    if why:
        if os.environ.get(CI_VAR):  # the machines CI runs on have both: a skip there would hide these tests
            pytest.fail(f"{why}; {CI_VAR} is set, so the tests that need it fail instead of skipping")
        pytest.skip(why)
    return make_mongoeco_python()


@pytest.fixture(scope="session")
def mongoeco(mongoeco_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of mongoeco's wire server (in memory)."""
    port = free_port()
    log = tmp_path_factory.mktemp("mongoeco") / "mongoeco.log"
    argv = [str(mongoeco_python), str(SERVER), str(port)]
    with LoopbackService(argv, log=log, port=port, ready=pings(url_of(port))):
        yield url_of(port)


@pytest.fixture(scope="session")
def mongoeco_auth(mongoeco_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The port of a second mongoeco server that requires a user (USER, PASSWORD), as `mongod --auth` does."""
    port = free_port()
    log = tmp_path_factory.mktemp("mongoeco-auth") / "mongoeco.log"
    argv = [str(mongoeco_python), str(SERVER), str(port), USER, PASSWORD]
    url = url_of(port, f"{USER}:{PASSWORD}@") + "?authMechanism=SCRAM-SHA-256"
    with LoopbackService(argv, log=log, port=port, ready=pings(url)):
        yield port
