"""Registration: the entry point, the hook, what the kernel makes of it, and a light entry module."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from agentenv import PluginHost, validate_contribution
from agentenv.contracts import AgentKind, kinds
from agentenv_agents import plugin


def test_entry_point_is_declared() -> None:
    found = [ep for ep in entry_points(group="agentenv.plugins") if ep.name == "agents"]
    assert len(found) == 1
    assert found[0].value == "agentenv_agents.plugin"
    assert found[0].dist is not None and found[0].dist.metadata["Name"] == "agentenv-agents"


def test_hook_returns_valid_agent_kinds() -> None:
    names = {}
    for cls in [ref.load() for ref in plugin.agentenv_register_agent_kinds()]:
        assert issubclass(cls, AgentKind)
        key, problem = validate_contribution(kinds.AGENT_KINDS, cls)
        assert problem is None, problem
        names[key] = cls.__name__
    assert names == {"scripted": "ScriptedAgent", "llm": "LlmAgent"}


def test_kernel_loads_the_plugin() -> None:
    host = PluginHost(environ={"AGENTENV_PLUGINS": "agents"})
    registry = host.registry(kinds.AGENT_KINDS)
    info = host.find("agentenv-agents")
    assert info is not None and info.status == "ok", info and info.problems
    assert registry["scripted"].obj.__name__ == "ScriptedAgent"
    assert registry["llm"].dist == "agentenv-agents"


def test_imports_stay_light() -> None:
    code = (
        "import sys, agentenv_agents, agentenv_agents.plugin\n"
        "loaded = [m for m in sys.modules if m.startswith('agentenv_agents.') and m != 'agentenv_agents.plugin']\n"
        "assert not loaded, loaded\n"
        "import agentenv_agents.llm, agentenv_agents.scripted\n"
        "assert 'httpx' not in sys.modules, 'httpx imported at module level'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
