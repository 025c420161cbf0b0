"""The web-desk world served by `agentenv serve` (the browser runs in the world's own process): the official MCP SDK
client lists and calls the browser tools and refunds on the desk's website; the browser's DevTools endpoint lets a
separate process attach with playwright's `connect_over_cdp` and see the very page the MCP client left."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentenv_testing.services import agentenv_serve

SETTINGS = {
    "website": {"app": "agentenv_helpdesk.web:app"},
    "browser": {"start_url": "{website}/tickets", "debugging_port": 0},
}
ATTACH = textwrap.dedent(
    """
    import asyncio, json, sys
    from playwright.async_api import async_playwright

    async def main(endpoint, url):
        async with async_playwright() as p:
            browser = await p.chromium.connect_over_cdp(endpoint)
            (page,) = [page for context in browser.contexts for page in context.pages if page.url == url]
            print(json.dumps({"title": await page.title(), "refunds": await page.inner_text("table:last-of-type")}))

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


@pytest.fixture
def served(chromium: str, tmp_path: Path) -> Iterator[str]:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    args = ["helpdesk,website,browser", "--artifact", "helpdesk=acme", "--settings-file", str(settings)]
    with agentenv_serve(args, env={"AGENTENV_CHROMIUM": chromium, "PATH": "/usr/bin:/bin"}) as url:
        yield url


async def refund_over_mcp(url: str) -> dict[str, Any]:
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(timeout=120) as http,  # the first browser call launches Chromium in the server
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}

        async def call(tool: str, **arguments: Any) -> Any:
            result = await session.call_tool(tool, arguments)
            assert not result.is_error, result.content
            return result.structured_content

        async def press(text: str, role: str) -> Any:
            return await call("click", element=(await call("find", text=text, role=role))["element"])

        async def fill(label: str, text: str) -> None:
            await call("type", element=(await call("find", text=label, role="textbox"))["element"], text=text)

        await press("TCK-9001", "link")
        await press("ORD-5001", "link")
        await fill("Amount", "89.99")
        await fill("Reason", "Boots arrived damaged")
        after = await press("Issue refund", "button")
        refunds = await call("list_refunds", order_id="ORD-5001")
        devtools = await call("devtools")
        return {"names": names, "after": after, "refunds": refunds, "devtools": devtools}


def test_an_mcp_client_refunds_in_the_served_browser_and_cdp_sees_the_page(served: str) -> None:
    done = asyncio.run(refund_over_mcp(served))
    assert {"goto", "snapshot", "find", "click", "type", "select", "screenshot", "devtools", "site_url"} <= done[
        "names"
    ]
    assert done["after"]["url"].endswith("/orders/ORD-5001?notice=Refunded+89.99")
    assert done["refunds"]["total_refunded"] == 89.99  # the world's own state, read through the helpdesk's tool
    where = done["devtools"]
    assert where["url"] == done["after"]["url"] and where["cdp_url"].startswith("http://127.0.0.1:")
    attached = subprocess.run(
        [sys.executable, "-c", ATTACH, where["cdp_url"], where["url"]], capture_output=True, text=True, timeout=120
    )
    assert attached.returncode == 0, attached.stderr[-2000:]
    seen = json.loads(attached.stdout)
    assert seen["title"] == "Order ORD-5001 · Support desk" and "89.99 USD" in seen["refunds"]
