"""Fixtures: the local Modal stand-in (tests/standin), started once per session on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # `standin` is a folder beside this file, not an installed package

from standin.server import ModalStandin


@pytest.fixture(scope="session")
def modal_standin_server() -> Iterator[ModalStandin]:
    with ModalStandin() as standin:
        yield standin


@pytest.fixture
def modal_standin(modal_standin_server: ModalStandin, monkeypatch: pytest.MonkeyPatch) -> ModalStandin:
    """The stand-in, with MODAL_SERVER_URL and the token pointed at it for this test only."""
    for name, value in modal_standin_server.environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MODAL_PROFILE", raising=False)
    monkeypatch.delenv("MODAL_ENVIRONMENT", raising=False)
    return modal_standin_server
