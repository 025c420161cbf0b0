"""The conformance kit against real E2B. Runs only when E2B_API_KEY is set (it creates and kills sandboxes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agentenv.contracts import SandboxProvider
from agentenv_e2b.provider import E2BProvider
from agentenv_testing.sandboxes import SandboxProviderConformance

pytestmark = pytest.mark.skipif(
    not os.environ.get("E2B_API_KEY"), reason="E2B_API_KEY is not set: live E2B tests need a real account"
)


class TestE2BLiveConformance(SandboxProviderConformance):
    supports_vm = True
    supports_network_allowlist = True
    supports_ports = True
    supports_limits = False
    network_modes = frozenset({"loopback"})
    image = os.environ.get("AGENTENV_E2B_TEMPLATE")  # None: the `base` template (has python3)
    ready_seconds = 60.0

    def make_provider(self, tmp_path: Path) -> SandboxProvider:
        return E2BProvider({"default_ttl_seconds": 300})
