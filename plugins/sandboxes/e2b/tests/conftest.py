"""Fixtures: a local E2B stand-in (control plane, envd, edge) that the real `e2b` SDK talks to."""

from __future__ import annotations

import importlib.util
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def _load_standin():  # type: ignore[no-untyped-def]
    """Import tests/standin/server.py under a name no other plugin's tests can take (`standin` is common)."""
    name = "agentenv_e2b_standin"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parent / "standin" / "server.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


E2BStandIn = _load_standin().E2BStandIn


def _route_through_edge(standin: E2BStandIn) -> None:
    """Send plain `urllib` requests (the kit's port checks) through the stand-in's edge, as DNS would to E2B's."""
    proxy = urllib.request.ProxyHandler({"http": standin.edge_url})
    urllib.request.install_opener(urllib.request.build_opener(proxy))


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[E2BStandIn]:
    """One stand-in per test module (it outlives each test's own sandbox teardown)."""
    with E2BStandIn(tmp_path_factory.mktemp("e2b-standin")) as server:
        _route_through_edge(server)
        try:
            yield server
        finally:
            urllib.request.install_opener(None)  # type: ignore[arg-type]
