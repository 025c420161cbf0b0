"""What the reference implementation's clients read on our cards, and what we read on theirs: the agent-config
extension's `methods` object (its `prompt_agent` negotiates against it, then POSTs the fields), and relative
card URLs (its default `"url": "/a2a"`) resolved against the card's address."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from a2a_testkit import EchoAgent, notes_world
from agentenv_a2a.agent import A2aAgent, A2aSettings
from agentenv_a2a.server import build_a2a_app, serve_a2a

URI = "urn:agentenv:agent-config/v1"


def reference_negotiation(card: dict[str, Any], desired: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The reference's `A2AAgent.negotiate_agent_config` (agent_env/a2a_agent/a2a_agent.py), expression for
    expression: it reads `params.methods` as an object, so a list there raised AttributeError in `prompt_agent`."""
    ext = next((e for e in (card.get("capabilities") or {}).get("extensions", []) if e.get("uri") == URI), None)
    if not ext:
        return None
    params = ext.get("params") or {}
    supported = params.get("methods", {}).get("set", {}).get("request", {}).get("supported", [])
    fields = {k: v for k, v in desired.items() if k in supported}
    if not fields:
        return None
    return params.get("endpoint", "/ext/agent-config"), fields


def test_the_reference_prompt_agent_negotiates_and_configures_our_agent(served):
    card = httpx.get(f"{served.url}/.well-known/agent-card.json", timeout=10).json()
    desired = {"model": "m", "system_prompt": "Answer in French.", "effort": "high", "timeout_seconds": 60}
    negotiated = reference_negotiation(card, desired)
    assert negotiated == ("/agentenv", {"system_prompt": "Answer in French."})
    endpoint, fields = negotiated
    posted = httpx.post(served.url + endpoint, json=fields, timeout=10)  # its post_agent_config: a2a_url + endpoint
    posted.raise_for_status()
    assert posted.json() == {"status": "updated"}
    readback = httpx.get(served.url + endpoint, timeout=10).json()  # its `get` (readback) operation
    assert readback["config"]["system_prompt"] == "Answer in French."
    refused = httpx.post(served.url + endpoint, json={"model": "m"}, timeout=10)
    assert refused.status_code == 400 and "'model'" in refused.json()["detail"]
    assert "system_prompt" in refused.json()["detail"]  # names what is supported


def test_readers_accept_both_shapes_of_methods():
    from agentenv_a2a.cards import extension_endpoint, rpc_methods

    assert rpc_methods({"methods": ["config/get", "config/set"]}) == ["config/get", "config/set"]  # older agentenv
    assert rpc_methods({"methods": {"set": {}}, "rpc": ["config/get"]}) == ["config/get"]  # now
    assert rpc_methods({"methods": {"set": {}}}) is None  # the reference's own agents: REST only
    assert extension_endpoint("http://h:1/p", {"endpoint": "/agentenv"}, "/x") == "http://h:1/p/agentenv"
    assert extension_endpoint("http://h:1", {"endpoint": "http://o:2/agentenv"}, "/x") == "http://o:2/agentenv"
    assert extension_endpoint("http://h:1/", {}, "/agentenv") == "http://h:1/agentenv"


@pytest.mark.parametrize(
    ("card_url", "url", "resolved"),
    [
        ("http://h:8000/.well-known/agent.json", "/a2a", "http://h:8000/a2a"),
        ("http://h:8000/.well-known/agent-card.json", "/", "http://h:8000/"),
        ("http://h:8000/.well-known/agent.json", "https://elsewhere/a2a", "https://elsewhere/a2a"),
    ],
)
def test_resolve_url(card_url: str, url: str, resolved: str):
    from agentenv_a2a.cards import resolve_url

    assert resolve_url(card_url, url) == resolved


def test_agent_kind_talks_to_an_agent_whose_card_urls_are_relative():
    """A card built with `url="/"`: the 1.0 interface at `/`, the 0.3 one at `/a2a`, both relative."""
    _world, tools = notes_world()
    app = build_a2a_app(EchoAgent(), tools, name="Echo", description="d", url="/")
    with serve_a2a(app) as url:
        card = httpx.get(f"{url}/.well-known/agent-card.json", timeout=10).json()
        assert {i["url"] for i in card["supportedInterfaces"]} == {"/", "/a2a"}
        answer = asyncio.run(A2aAgent(A2aSettings(url=url, timeout=30)).respond("hi there", tools=None))  # type: ignore[arg-type]
    assert answer.text == "echo: hi there"


def test_agent_kind_talks_to_a_03_agent_whose_card_says_url_a2a(served):
    """What the reference's agents serve: only the 0.3 card, with `"url": "/a2a"`."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def forward(request: Request) -> Response:
        body = await request.body()
        if request.url.path == "/.well-known/agent-card.json" or (request.url.path == "/" and body):
            return Response(status_code=404)
        async with httpx.AsyncClient() as http:
            upstream = await http.request(request.method, served.url + request.url.path, content=body,
                                          headers={"content-type": "application/json"})
        text = upstream.text.replace(served.url, "")  # every absolute URL of ours becomes a path
        return Response(text, status_code=upstream.status_code, media_type=upstream.headers.get("content-type"))

    proxy = Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST"])])
    with serve_a2a(proxy) as url:
        assert httpx.get(f"{url}/.well-known/agent.json", timeout=10).json()["url"] == "/a2a"
        answer = asyncio.run(A2aAgent(A2aSettings(url=url, timeout=30)).respond("via 0.3", tools=None))  # type: ignore[arg-type]
    assert answer.text == "echo: via 0.3"
