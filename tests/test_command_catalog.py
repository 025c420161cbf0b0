"""A command whose plugin is not installed names the distribution that brings it.

The runtime answers the kernel's `agentenv_command_hints` hook from `agentenv_runtime/commands.json`, a table
of the first-party plugins' commands; the second test keeps the table equal to what the first-party
plugins of this workspace really register.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.resources import files

import pytest
from agentenv import get_host, reset_host
from agentenv.contracts import kinds
from agentenv_testing.installs import CliResult


def test_a_missing_first_party_command_names_its_distribution(
    agentenv_cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTENV_DISABLE_PLUGINS", "gateway")
    result = agentenv_cli("serve", "--help")
    assert result.returncode == 2
    expected = "no such command 'serve'. It comes with agentenv-gateway: agentenv plugin add agentenv-gateway"
    assert expected in result.stderr
    typo = agentenv_cli("rnu")
    assert "Did you mean 'run'?" in typo.stderr


def test_the_catalog_lists_every_first_party_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTENV_PLUGINS", raising=False)
    monkeypatch.delenv("AGENTENV_DISABLE_PLUGINS", raising=False)
    reset_host()
    registered = {
        name: entry.dist
        for name, entry in get_host().registry(kinds.CLI_COMMANDS).items()
        if " " not in name and entry.dist.startswith("agentenv-")
    }
    catalog = json.loads(files("agentenv_runtime").joinpath("commands.json").read_text(encoding="utf-8"))
    reset_host()
    assert catalog == registered, "regenerate runtime/src/agentenv_runtime/commands.json from the registered commands"


def test_every_command_prints_help_in_one_plain_style(agentenv_cli: Callable[..., CliResult]) -> None:
    """`agentenv --help` and `run --help` are plain text; the typer commands drew rich boxes in the same
    terminal. Every command's help and usage errors are plain text now."""
    reset_host()
    names = [*sorted(n for n in get_host().registry(kinds.CLI_COMMANDS) if " " not in n), "plugin", "config"]
    for name in names:
        shown = agentenv_cli(name, "--help")
        assert shown.returncode == 0, shown
        text = shown.stdout
        assert not set("╭╮╰╯│─") & set(text), f"agentenv {name} --help draws boxes:\n{text}"
        assert text.lower().startswith("usage: agentenv " + name), f"agentenv {name} --help:\n{text}"
    wrong = agentenv_cli("runs", "list", "--nope")
    assert wrong.returncode == 2 and not set("╭╮╰╯│") & set(wrong.stderr), wrong.stderr
    assert "No such option: --nope" in wrong.stderr
