"""The browser env served over MCP by `agentenv serve browser`, driven by the official MCP SDK client."""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import Iterator
from typing import Any

import pytest
from agentenv_testing.services import agentenv_serve


@pytest.fixture
def served(chromium: str) -> Iterator[str]:
    with agentenv_serve(["browser"], env={"AGENTENV_CHROMIUM": chromium, "PATH": "/usr/bin:/bin"}) as url:
        yield url


async def drive(url: str, site: str) -> dict[str, Any]:
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(timeout=120) as http,  # the first call launches Chromium
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        opened = await session.call_tool("goto", {"url": f"{site}/index.html"})
        tree = await session.call_tool("snapshot", {})
        refund = int(re.search(r'\[(\d+)\] button "Refund"', tree.structured_content["tree"]).group(1))  # type: ignore[union-attr]
        clicked = await session.call_tool("click", {"element": refund})
        shot = await session.call_tool("screenshot", {})
        return {"names": names, "opened": opened, "clicked": clicked, "shot": shot}


def test_an_agent_browses_through_the_served_world(served: str, site: str) -> None:
    done = asyncio.run(drive(served, site))
    assert {"goto", "snapshot", "click", "type", "screenshot", "mouse_click", "key"} <= done["names"]
    assert done["opened"].structured_content["title"] == "Desk"
    assert done["clicked"].structured_content["url"].startswith(f"{site}/done.html")
    png = base64.b64decode(done["shot"].structured_content["png_base64"])
    assert png.startswith(b"\x89PNG")
