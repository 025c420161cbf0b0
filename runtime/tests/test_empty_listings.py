"""Listings with nothing to list say what to add, and a missing store is a one-line error, never a traceback."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from agentenv_testing.installs import CliResult

Cli = Callable[..., CliResult]


@pytest.fixture
def runtime_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the runtime and what it requires, minus the local stores: a bare install."""
    monkeypatch.setenv("AGENTENV_PLUGINS", "runtime")
    monkeypatch.setenv("AGENTENV_DISABLE_PLUGINS", "store-local")
    monkeypatch.setenv("AGENTENV_NO_CACHE", "1")


def test_steps_list_with_no_step_plugin_says_what_to_add(runtime_only: None, agentenv: Cli) -> None:
    result = agentenv("steps", "list")
    assert (result.returncode, result.stdout.strip()) == (
        0, "No step types installed. Add some: agentenv plugin add agentenv-steps")  # fmt: skip
    assert agentenv("steps", "list", "--json").json() == []


def test_sandbox_list_with_no_provider_says_what_to_add(runtime_only: None, agentenv: Cli) -> None:
    result = agentenv("sandbox", "list")
    assert result.returncode == 0
    assert "No sandbox providers installed. Add one: agentenv plugin add agentenv-sandbox-local" in result.stdout


def test_runs_list_with_no_store_is_one_line_naming_the_plugin(runtime_only: None, agentenv: Cli) -> None:
    result = agentenv("runs", "list")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: [store] document = 'sqlite' but no such document store is installed; "
        "fix: add a store plugin: agentenv plugin add agentenv-store-local"
    )
    assert "Traceback" not in result.stderr
