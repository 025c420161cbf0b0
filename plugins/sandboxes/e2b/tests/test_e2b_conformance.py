"""The `e2b` provider against the kernel's sandbox conformance kit, through the real SDK and a local stand-in."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentenv.contracts import SandboxProvider
from agentenv_e2b.provider import E2BProvider
from agentenv_e2b_standin import E2BStandIn  # loaded by conftest.py
from agentenv_testing.sandboxes import SandboxProviderConformance


class TestE2BConformance(SandboxProviderConformance):
    supports_vm = True
    supports_network_allowlist = True  # enforced by E2B's egress firewall (allow_out / deny_out)
    supports_ports = True
    supports_limits = False  # CPU, memory and disk are fixed per template
    network_modes = frozenset({"loopback"})  # deny all egress, URLs not public (recorded by the stand-in)
    image = None  # the provider's default template, `base`
    ready_seconds = 20.0

    @pytest.fixture(autouse=True)
    def _use_standin(self, standin: E2BStandIn) -> None:
        self.standin = standin

    def make_provider(self, tmp_path: Path) -> SandboxProvider:
        return E2BProvider(self.standin.settings())
