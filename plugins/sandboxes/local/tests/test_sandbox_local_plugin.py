"""Registration: the entry point, the hook, and what the kernel makes of them."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from agentenv import PluginHost, validate_contribution
from agentenv.contracts import kinds
from agentenv_sandbox_local import plugin
from agentenv_sandbox_local.inline import InlineProvider
from agentenv_sandbox_local.process import ProcessProvider


def test_entry_point_is_declared() -> None:
    found = [ep for ep in entry_points(group="agentenv.plugins") if ep.name == "sandbox-local"]
    assert len(found) == 1
    assert found[0].value == "agentenv_sandbox_local.plugin"
    assert found[0].dist is not None and found[0].dist.metadata["Name"] == "agentenv-sandbox-local"


def test_hook_returns_a_valid_provider() -> None:
    classes = [ref.load() for ref in plugin.agentenv_register_sandbox_providers()]
    assert classes == [InlineProvider, ProcessProvider]
    for cls in classes:
        key, problem = validate_contribution(kinds.SANDBOX_PROVIDERS, cls)
        assert (key, problem) == (cls.name, None)
        assert cls.modes == frozenset({"container"})


def test_kernel_loads_the_plugin() -> None:
    host = PluginHost(environ={"AGENTENV_PLUGINS": "sandbox-local"})
    info = host.find("agentenv-sandbox-local")
    assert info is not None and info.status == "ok", info and info.problems
    for name, cls in (("inline", InlineProvider), ("process", ProcessProvider)):
        entry = host.registry(kinds.SANDBOX_PROVIDERS)[name]
        assert entry.obj is cls and entry.dist == "agentenv-sandbox-local"


def test_entry_module_is_light() -> None:
    code = (
        "import sys, agentenv_sandbox_local.plugin\n"
        "heavy = [m for m in sys.modules if m.startswith('agentenv_sandbox_local.') "
        "and m != 'agentenv_sandbox_local.plugin']\n"
        "assert not heavy, heavy\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
