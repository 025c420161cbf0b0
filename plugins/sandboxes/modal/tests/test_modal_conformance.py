"""The shared sandbox contract (agentenv_testing.sandboxes), through the real `modal` SDK.

Against the local stand-in of Modal's server (tests/standin) always; against real Modal only when
MODAL_TOKEN_ID is set in the environment (never in CI).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agentenv.contracts import SandboxProvider
from agentenv_modal.provider import ModalProvider, ModalVmProvider
from agentenv_testing.sandboxes import SandboxProviderConformance

_LIVE = bool(os.environ.get("MODAL_TOKEN_ID"))
_LIVE_SKIP = "live Modal tests need MODAL_TOKEN_ID (and MODAL_TOKEN_SECRET) in the environment"


class _StandinKit(SandboxProviderConformance):
    image = "python:3.11-slim"  # the stand-in records it; commands run on this host
    supports_network_allowlist = True  # recorded, not enforced, by the stand-in (see test_modal_provider)
    limits = frozenset({"cpu", "memory_mb"})  # disk_mb is refused (test_modal_provider)
    network_modes = frozenset({"loopback"})  # block_network, recorded by the stand-in

    @pytest.fixture(autouse=True)
    def _standin(self, modal_standin: object) -> None:
        """Point the SDK at the stand-in for every kit test."""


class TestModalConformance(_StandinKit):
    def make_provider(self, tmp_path: Path) -> SandboxProvider:
        # the stand-in cannot terminate TLS; unencrypted tunnels give plain http URLs
        return ModalProvider({"tunnels": "unencrypted"})


class TestModalVmConformance(_StandinKit):
    supports_vm = True

    def make_provider(self, tmp_path: Path) -> SandboxProvider:
        return ModalVmProvider({"tunnels": "unencrypted"})


@pytest.mark.skipif(not _LIVE, reason=_LIVE_SKIP)
class TestModalLiveConformance(SandboxProviderConformance):
    image = "python:3.11-slim"
    supports_network_allowlist = True
    supports_limits = True
    network_modes = frozenset({"loopback"})
    ready_seconds = 180.0

    def make_provider(self, tmp_path: Path) -> SandboxProvider:
        return ModalProvider({"app_name": "agentenv-kit", "default_ttl_seconds": 600})


@pytest.mark.skipif(not _LIVE, reason=_LIVE_SKIP)
class TestModalVmLiveConformance(TestModalLiveConformance):
    supports_vm = True

    def make_provider(self, tmp_path: Path) -> SandboxProvider:
        return ModalVmProvider({"app_name": "agentenv-kit", "default_ttl_seconds": 600})
