"""A2A 0.3 beside 1.0: the 0.3 card and `message/send` / `tasks/get` on the wire, checked against the 0.3
models the a2a-sdk keeps for compatibility (`a2a.compat.v0_3.types`), and our `a2a` agent kind against an
agent that serves only the 0.3 card. (`tests/test_reference_interop.py` repeats this with a2a-sdk 0.3 itself.)
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from a2a.compat.v0_3 import types as v03


def message_send(text: str, **ids: str) -> dict[str, Any]:
    parts = [{"kind": "text", "text": text}]
    message = {"role": "user", "parts": parts, "messageId": uuid.uuid4().hex, "kind": "message"}
    return {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message | ids}}


def test_legacy_card_has_a_url_and_03_interface(served):
    response = httpx.get(f"{served.url}/.well-known/agent.json", timeout=10)
    assert response.status_code == 200
    card = v03.AgentCard.model_validate(response.json())
    assert card.protocol_version == "0.3.0" and card.preferred_transport == "JSONRPC"
    assert card.url == f"{served.url}/a2a"
    assert card.skills and card.skills[0].id == "echo-test"
    current = httpx.get(f"{served.url}/.well-known/agent-card.json", timeout=10).json()
    versions = {i["protocolVersion"]: i["url"] for i in current["supportedInterfaces"]}
    assert versions["1.0"].rstrip("/") == served.url and versions["0.3.0"] == card.url


def test_message_send_and_tasks_get(served):
    for path in ("/a2a", "/"):
        reply = httpx.post(served.url + path, json=message_send(f"hello over 0.3 at {path}"), timeout=30).json()
        assert "error" not in reply, reply
        task = v03.Task.model_validate(reply["result"])
        assert task.kind == "task" and task.status.state == v03.TaskState.completed
        texts = [p.root.text for a in task.artifacts or [] for p in a.parts if isinstance(p.root, v03.TextPart)]
        assert texts == [f"echo: hello over 0.3 at {path}"]
        got = httpx.post(
            served.url + path,
            json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task.id}},
            timeout=30,
        ).json()
        assert v03.Task.model_validate(got["result"]).id == task.id
    notes = served.world.query("notes", "SELECT text FROM notes ORDER BY rowid")
    assert [n["text"] for n in notes] == ["hello over 0.3 at /a2a", "hello over 0.3 at /"]
    missing = httpx.post(
        f"{served.url}/a2a", json={"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"id": "nope"}}
    ).json()
    assert missing["error"]["code"] == -32001  # TaskNotFoundError, 0.3's code


def test_agent_kind_speaks_03_to_an_agent_with_only_the_03_card(served):
    """A proxy that hides the 1.0 card and the 1.0 endpoint: what a 0.3-only agent looks like to our client."""
    from agentenv_a2a.agent import A2aAgent, A2aSettings
    from agentenv_a2a.server import serve_a2a
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    seen: list[str] = []

    async def forward(request: Request) -> Response:
        body = await request.body()
        if request.url.path == "/.well-known/agent-card.json" or (request.url.path == "/" and body):
            return Response(status_code=404)
        if body:
            seen.append(httpx.Response(200, content=body).json().get("method"))
        async with httpx.AsyncClient() as http:
            upstream = await http.request(request.method, served.url + request.url.path, content=body,
                                          headers={"content-type": "application/json"})
        text = upstream.text.replace(served.url, str(request.base_url).rstrip("/"))
        return Response(text, status_code=upstream.status_code, media_type=upstream.headers.get("content-type"))

    proxy = Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST"])])
    with serve_a2a(proxy) as url:
        agent = A2aAgent(A2aSettings(url=url, timeout=30))
        answer = asyncio.run(agent.respond("hello from the 1.0 client", tools=None))  # type: ignore[arg-type]
    assert answer.text == "echo: hello from the 1.0 client"
    assert seen and set(seen) <= {"message/send", "message/stream", "tasks/get"}, seen
