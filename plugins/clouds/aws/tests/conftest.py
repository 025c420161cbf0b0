"""A moto server (all AWS services in one process, in server mode) on a free loopback port, for this folder."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv_testing.services import LoopbackService

FAKE_CHAIN = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


@pytest.fixture(scope="session")
def aws_chain() -> Iterator[dict[str, str]]:
    """Credentials of the usual AWS chain (environment variables), as moto accepts any."""
    saved = {name: os.environ.get(name) for name in FAKE_CHAIN}
    os.environ.update(FAKE_CHAIN)
    yield FAKE_CHAIN
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def moto(aws_chain: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackService]:
    """moto in server mode, started for these tests and stopped after them."""
    server = Path(sys.executable).with_name("moto_server")
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with LoopbackService([str(server), "-H", "127.0.0.1", "-p", "{port}"], log=log, ready_path="/moto-api/") as svc:
        yield svc
