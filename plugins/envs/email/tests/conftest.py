"""Fixtures for the email env tests: envs at a fixed virtual time, empty or loaded with `acme`/`globex`.

Helpers are fixtures because test modules cannot import this file under `--import-mode=importlib`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from agentenv_email.env import EmailEnv
from agentenv_runtime import Artifact

START = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


class ManualClock:
    """A virtual clock the test moves by hand."""

    def __init__(self, start: datetime = START) -> None:
        self.moment = start

    def now(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


def make_env(artifact: Artifact | None = None, **settings: Any) -> EmailEnv:
    env = EmailEnv(settings or None)
    env.clock = ManualClock()
    if artifact is not None:
        env.load(artifact)
    return env


@pytest.fixture(scope="session")
def acme_artifact() -> Artifact:
    return EmailEnv.find_artifact("acme")


@pytest.fixture(scope="session")
def globex_artifact() -> Artifact:
    return EmailEnv.find_artifact("globex")


@pytest.fixture
def empty() -> EmailEnv:
    return make_env()


@pytest.fixture
def acme(acme_artifact: Artifact) -> EmailEnv:
    return make_env(acme_artifact)


@pytest.fixture(scope="session")
def globex_loaded(globex_artifact: Artifact) -> EmailEnv:
    """One loaded globex env per session (loading takes a few hundred ms); tests reset() it or fork() it."""
    return make_env(globex_artifact, address="support@globex.example")


@pytest.fixture
def globex(globex_loaded: EmailEnv) -> EmailEnv:
    return globex_loaded.fork()


@pytest.fixture
def ok() -> Callable[..., Any]:
    """Call a tool and insist it succeeded; returns the result."""

    def call(env: EmailEnv, tool: str, **arguments: Any) -> Any:
        result, error = env.call(tool, arguments)
        assert error is None, f"{tool} failed: {error}"
        return result

    return call


@pytest.fixture
def refused() -> Callable[..., dict[str, Any]]:
    """Call a tool, insist it was refused and that the env's state did not change; returns the error."""

    def call(env: EmailEnv, tool: str, **arguments: Any) -> dict[str, Any]:
        before = env.snapshot()
        result, error = env.call(tool, arguments)
        assert error is not None, f"{tool} unexpectedly succeeded: {result}"
        assert env.snapshot() == before, f"{tool} changed state although it was refused"
        return error

    return call


@pytest.fixture
def dana_email(acme: EmailEnv) -> str:
    """Id of Dana Kim's damaged-boots email in the acme data."""
    rows = acme.query("SELECT id FROM emails WHERE from_address = 'dana.kim@example.com' AND subject LIKE 'Boots%'")
    assert len(rows) == 1
    return str(rows[0]["id"])
