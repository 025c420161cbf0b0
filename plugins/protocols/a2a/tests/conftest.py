"""Make the test helpers (`a2a_testkit`) importable from the test modules and from subprocesses."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

TESTS = str(Path(__file__).parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)


@pytest.fixture
def served() -> Iterator[SimpleNamespace]:
    """The echo agent acting in a fresh notes world, served over A2A on a free loopback port."""
    from a2a_testkit import EchoAgent, notes_world
    from agentenv_a2a.server import build_a2a_app, serve_a2a

    world, tools = notes_world()
    agent = EchoAgent()
    app = build_a2a_app(agent, tools, name="Echo", description="Echoes prompts into a notes world.")
    with serve_a2a(app, host="127.0.0.1", port=0) as url:
        yield SimpleNamespace(world=world, agent=agent, url=url)
