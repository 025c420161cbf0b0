"""Fixtures for the helpdesk tests: envs on a frozen virtual clock and a refusal checker."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from agentenv_helpdesk.env import HelpdeskEnv

NOW = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)
NOW_ISO = "2026-11-25T10:00:00Z"


class FixedClock:
    """A frozen world clock the tests can move by hand."""

    def __init__(self, moment: datetime = NOW) -> None:
        self.moment = moment

    def now(self) -> datetime:
        return self.moment


def _make_env(artifact: str | None = "acme", **settings: Any) -> HelpdeskEnv:
    env = HelpdeskEnv(settings)
    env.clock = FixedClock()
    if artifact:
        env.load(HelpdeskEnv.find_artifact(artifact))
    return env


@pytest.fixture
def make_env() -> Callable[..., HelpdeskEnv]:
    """Factory: `make_env(artifact_or_None, **settings)` on a clock frozen at 2026-11-25T10:00:00Z."""
    return _make_env


@pytest.fixture
def acme() -> HelpdeskEnv:
    return _make_env("acme")


@pytest.fixture
def ok() -> Callable[..., Any]:
    """Call a tool that must succeed and return its result."""

    def run(env: HelpdeskEnv, tool: str, **args: Any) -> Any:
        result, error = env.call(tool, args)
        assert error is None, error
        return result

    return run


@pytest.fixture
def refused() -> Callable[..., dict[str, Any]]:
    """Call a tool that must be refused with `code` (and `field`), and check nothing changed."""

    def run(env: HelpdeskEnv, tool: str, code: str, field: str | None = None, **args: Any) -> dict[str, Any]:
        before = env.snapshot()
        result, error = env.call(tool, args)
        assert result is None
        assert error is not None and error["code"] == code, error
        if field is not None:
            fields = [e["field"] for e in error.get("errors", [])] or [error.get("field")]
            assert field in fields, error
            assert field in error["message"], error
        assert env.snapshot() == before, f"{tool} changed state although it was refused"
        return error

    return run
