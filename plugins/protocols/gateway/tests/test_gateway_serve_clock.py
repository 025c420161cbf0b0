"""`agentenv serve --start` arms the virtual clock like a task's deploy_env does; `--rate` lets it run. And a
world with a tool whose parameter type has no JSON Schema is refused at start in one line (not as HTTP 500)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest


def agentenv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, timeout=120)


def test_serve_with_start_answers_in_virtual_time() -> None:
    command = [sys.executable, "-m", "agentenv", "serve", "helpdesk", "-a", "acme", "--port", "0"]
    process = subprocess.Popen([*command, "--start", "2026-11-24T10:00:00Z"], stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        match = re.search(r"at (http://\S+)", first)
        assert match, first
        now = agentenv("tools", "--url", match.group(1), "--json", "get_time")
        assert now.returncode == 0, now.stderr
        assert json.loads(now.stdout)["utc"] == "2026-11-24T10:00:00+00:00"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(20)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--start", "next tuesday"], "start: 'next tuesday' is not an ISO 8601 time"),
        (["--rate", "60"], "--rate: give --start too"),
        (["--start", "2026-11-24T10:00:00Z", "--rate", "-1"], "rate: -1.0 must be ≥ 0 (0 freezes the clock)"),
    ],
)
def test_bad_clock_options_are_refused_in_one_line(args: list[str], message: str) -> None:
    result = agentenv("serve", "helpdesk", "--port", "0", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_serve_refuses_a_tool_without_a_json_schema_in_one_line(tmp_path: Path) -> None:
    from agentenv_testing.installs import install_env_plugin, run_cli

    env = (
        "from agentenv_runtime import Env, tool\n\n\nclass Gadget:\n    pass\n\n\nclass Bad(Env):\n"
        '    name = "fixture_gadgets"\n\n    @tool\n    def use(self, thing: Gadget) -> dict:\n'
        '        """Use it."""\n        return {}\n'
    )
    install_env_plugin(tmp_path, "fixture_gadgets", env, "Bad")
    result = run_cli("serve", "fixture_gadgets", "--port", "0", paths=[tmp_path])
    assert result.returncode == 2, result
    assert result.stderr.startswith("error: env 'fixture_gadgets' of agentenv-fixture-gadgets has tools without")
    assert "tool 'use': parameter 'thing' has type Gadget" in result.stderr
    assert "Traceback" not in result.stderr
