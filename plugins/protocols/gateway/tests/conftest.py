"""Shared fixtures: a support-desk world served on loopback, and an official MCP client session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from typing import Any

import pytest
from agentenv_gateway.app import build_app
from agentenv_gateway.server import serve_in_thread
from agentenv_runtime import World, build_world

ROLES = {"support": {"tools": ["*"], "deny": ["issue_refund"]}, "billing_lead": {"tools": ["*"]}}
TOKENS = {"support": "tok-support", "billing_lead": "tok-billing", "control": "tok-control"}


def bearer(role: str) -> dict[str, str]:
    return {"authorization": f"Bearer {TOKENS[role]}"}


class Served:
    def __init__(self, url: str, world: World, app: Any) -> None:
        self.url = url
        self.world = world
        self.app = app


@contextmanager
def serve_world(tokens: dict[str, str] | None = TOKENS, **app_kwargs: Any) -> Iterator[Served]:
    world = build_world("slack,email,helpdesk", artifacts=["acme"], roles=ROLES)
    app = build_app(world, tokens=tokens, **app_kwargs)
    with serve_in_thread(app) as url:
        yield Served(url, world, app)


@pytest.fixture
def served() -> Iterator[Served]:
    with serve_world() as handle:
        yield handle


@pytest.fixture
def tokens() -> dict[str, str]:
    return dict(TOKENS)


@pytest.fixture
def serve() -> Callable[..., AbstractContextManager[Served]]:
    return serve_world


@asynccontextmanager
async def mcp_session(url: str, token: str | None) -> AsyncIterator[Any]:
    """An initialized official-SDK client session over streamable HTTP."""
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@pytest.fixture
def mcp() -> Callable[[str, str | None], Any]:
    return mcp_session
