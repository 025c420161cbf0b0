"""The `inline` and `process` providers against the kernel's sandbox conformance kit."""

from __future__ import annotations

import sys
from pathlib import Path

from agentenv.contracts import SandboxProvider
from agentenv_sandbox_local.inline import InlineProvider
from agentenv_sandbox_local.process import ProcessProvider
from agentenv_testing.sandboxes import SandboxProviderConformance


class TestInlineConformance(SandboxProviderConformance):
    supports_vm = False
    supports_network_allowlist = False
    supports_ports = True
    supports_limits = False
    # The host's python, bound to loopback: inline ports are host ports.
    serve_command = f"'{sys.executable}' -m http.server {{port}} --bind 127.0.0.1 >/dev/null 2>&1 &"

    def make_provider(self, tmp_path: Path) -> SandboxProvider:
        return InlineProvider({"root": str(tmp_path / "work"), "state_dir": str(tmp_path / "state")})


class TestProcessConformance(SandboxProviderConformance):
    supports_vm = False
    supports_network_allowlist = False
    supports_ports = True
    limits = frozenset({"cpu", "memory_mb"})
    network_modes = frozenset({"loopback", "none"})
    # The kit's port is remapped to a free one, which every command sees as $AGENTENV_PORT_<port>.
    serve_command = f"'{sys.executable}' -m http.server $AGENTENV_PORT_{{port}} --bind 127.0.0.1 >/dev/null 2>&1 &"

    def make_provider(self, tmp_path: Path) -> SandboxProvider:
        return ProcessProvider({"root": str(tmp_path / "work"), "state_dir": str(tmp_path / "state")})
