"""Fixtures for the slack env tests: a workspace at a fixed virtual time, loaded with `acme`.

Helpers are handed out as fixtures because test modules cannot import this file under
`--import-mode=importlib`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from agentenv_slack.env import SlackEnv

START = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


class ManualClock:
    """A virtual clock the test moves by hand."""

    def __init__(self, start: datetime) -> None:
        self.moment = start

    def now(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


def _make_env(artifact: str | None = "acme", **settings: Any) -> SlackEnv:
    env = SlackEnv(settings or None)
    if artifact:
        env.load(SlackEnv.find_artifact(artifact))
    env.clock = ManualClock(START)
    return env


def _ok(env: SlackEnv, tool: str, **arguments: Any) -> Any:
    result, error = env.call(tool, arguments)
    assert error is None, error
    return result


def _refused(env: SlackEnv, tool: str, code: str, field: str, **arguments: Any) -> dict[str, Any]:
    before = env.export()
    result, error = env.call(tool, arguments)
    assert result is None
    assert error is not None
    assert error["code"] == code, error
    if code == "invalid_arguments":
        assert field in [problem["field"] for problem in error["errors"]], error
    else:
        assert error["field"] == field, error
    assert env.export() == before, "a refused call changed the state"
    return error


@pytest.fixture
def make_env() -> Callable[..., SlackEnv]:
    """`make_env(artifact="acme", **settings)`: a fresh env on a ManualClock at START."""
    return _make_env


@pytest.fixture
def env() -> SlackEnv:
    return _make_env()


@pytest.fixture
def ok() -> Callable[..., Any]:
    """`ok(env, tool, **args)`: call a tool that must succeed; returns its result."""
    return _ok


@pytest.fixture
def refused() -> Callable[..., dict[str, Any]]:
    """`refused(env, tool, code, field, **args)`: the call must fail naming `field`, state unchanged."""
    return _refused
