"""Registration through the entry point, and the promise that `agentenv_e2b.plugin` does not import the SDK."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from agentenv.contracts import SandboxProvider, contribution_problem


def test_entry_point_registers_the_provider():
    (ep,) = [ep for ep in entry_points(group="agentenv.plugins") if ep.name == "e2b"]
    assert ep.value == "agentenv_e2b.plugin"
    providers = [ref.load() for ref in ep.load().agentenv_register_sandbox_providers()]
    assert [p.name for p in providers] == ["e2b"]
    assert contribution_problem(providers[0], SandboxProvider) is None
    assert providers[0].modes == frozenset({"vm", "container"})


def test_plugin_module_does_not_import_the_sdk():
    code = (
        "import sys, agentenv_e2b.plugin as p; p.agentenv_register_sandbox_providers(); "
        "print(sorted(m for m in sys.modules if m == 'e2b' or m.startswith('e2b.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
