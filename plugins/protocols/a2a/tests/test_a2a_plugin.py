"""Registration, lazy imports, and the `agentenv a2a-serve` command."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from a2a_testkit import notes_host
from agentenv.contracts import AgentKind, CliCommand, contribution_problem
from agentenv_a2a import plugin
from agentenv_a2a.cli import app, build_served_agent, is_loopback, parse_settings
from typer.testing import CliRunner

TESTS = Path(__file__).parent


def test_registers_the_a2a_kind_and_the_command():
    kinds = [ref.load() for ref in plugin.agentenv_register_agent_kinds()]
    assert [k.name for k in kinds] == ["a2a"]
    assert contribution_problem(kinds[0], AgentKind) is None
    (command,) = plugin.agentenv_register_cli_commands()
    assert isinstance(command, CliCommand)
    assert (command.name, command.target) == ("a2a-serve", "agentenv_a2a.cli:app")


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)


def test_registration_and_root_help_do_not_import_the_sdk():
    code = textwrap.dedent(
        """
        import sys
        from agentenv_a2a import plugin
        [ref.load() for ref in plugin.agentenv_register_agent_kinds()]
        plugin.agentenv_register_cli_commands()
        from agentenv.cli.main import main
        main(["--help"])
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("a2a", "uvicorn", "starlette", "httpx"))
        print("HEAVY", heavy)
        """
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout


def test_installed_plugin_lists_the_command():
    done = subprocess.run(
        [sys.executable, "-c", "from agentenv.cli.main import main; raise SystemExit(main(['--help']))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "a2a-serve" in done.stdout


def test_loopback_detection():
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "192.168.1.4", "::", "example.com", "10.0.0.1"):
        assert not is_loopback(host), host


def test_non_loopback_host_is_refused_without_allow_remote():
    result = CliRunner().invoke(app, ["--env", "notes", "--agent-kind", "echo-test", "--host", "0.0.0.0"])
    assert result.exit_code == 1
    assert "not a loopback address" in result.output and "--allow-remote" in result.output


def test_bad_agent_settings_name_the_option(tmp_path):
    with pytest.raises(ValueError, match="--agent-settings: not valid JSON"):
        parse_settings("{policy")
    with pytest.raises(ValueError, match="must be a JSON object"):
        parse_settings("[1]")
    with pytest.raises(ValueError, match="cannot read it"):
        parse_settings(f"@{tmp_path / 'missing.json'}")
    good = tmp_path / "settings.json"
    good.write_text('{"url": "http://127.0.0.1:1"}')
    assert parse_settings(f"@{good}") == {"url": "http://127.0.0.1:1"}
    result = CliRunner().invoke(app, ["--env", "notes", "--agent-kind", "echo-test", "--agent-settings", "{x"])
    assert result.exit_code == 1 and "--agent-settings" in result.output


def test_build_served_agent_checks_kind_role_and_settings():
    common = {"env": "notes", "artifacts": [], "name": None, "description": None, "url": None}
    with pytest.raises(LookupError, match="--agent-kind"):
        build_served_agent(**common, role="default", agent_kind="nope", agent_settings={}, plugin_host=notes_host())
    with pytest.raises(ValueError, match="--role: world 'notes' has no role 'boss'"):
        build_served_agent(**common, role="boss", agent_kind="echo-test", agent_settings={}, plugin_host=notes_host())
    with pytest.raises(ValueError, match="--agent-settings for agent kind 'echo-test'"):
        build_served_agent(
            **common, role="default", agent_kind="echo-test", agent_settings={"x": 1}, plugin_host=notes_host()
        )


SERVE_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
import agentenv.plugins.host as host_module
from a2a_testkit import notes_host
host = notes_host()
host_module.get_host = lambda: host
from agentenv_a2a.cli import app
app(["--env", "notes", "--agent-kind", "echo-test", "--port", "0", "--name", "CLI echo"])
"""


def test_a2a_serve_command_serves_until_interrupted():
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE_SCRIPT.format(tests=str(TESTS))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert " at http://127.0.0.1:" in line, (line, process.stderr.read() if process.poll() is not None else "")
        url = line.rsplit(" at ", 1)[1].strip()
        card = httpx.get(f"{url}/.well-known/agent-card.json", timeout=10).json()
        assert card["name"] == "CLI echo"

        from agentenv_a2a.agent import A2aAgent

        agent = A2aAgent(A2aAgent.Settings(url=url))
        response = asyncio.run(agent.respond("over the wire", tools=None))  # type: ignore[arg-type]
        assert response.text == "echo: over the wire"
        assert response.structured and response.structured["notes"] == 1
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        assert "stopped; the world recorded 2 trajectory events" in err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
