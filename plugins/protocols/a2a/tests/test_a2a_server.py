"""Serving an agentenv agent over A2A: the card, and the official a2a-sdk client against it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import httpx
import pytest
from a2a_testkit import EchoAgent, notes_world
from agentenv_a2a.server import A2aServeError, build_a2a_app, serve_a2a


def tool_calls(world: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(e["tool"], e["args"]) for e in world.trajectory.events if e["kind"] == "tool_call"]


def test_card_has_the_required_fields(served):
    response = httpx.get(f"{served.url}/.well-known/agent-card.json", timeout=10)
    assert response.status_code == 200
    card = response.json()
    for field in (
        "name",
        "description",
        "version",
        "supportedInterfaces",
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
    ):
        assert card.get(field), f"card lacks {field}"
    assert card["name"] == "Echo"
    interface = card["supportedInterfaces"][0]
    assert interface["protocolBinding"] == "JSONRPC"
    assert interface["protocolVersion"] == "1.0"
    # Built without a public url: the card names the address it was asked on (the bound port).
    assert interface["url"].rstrip("/") == served.url
    assert card["capabilities"]["streaming"] is True
    assert card["skills"][0]["id"] == "echo-test"
    assert "text/plain" in card["defaultInputModes"]


def test_card_advertises_a_given_public_url():
    _world, tools = notes_world()
    app = build_a2a_app(EchoAgent(), tools, name="Echo", description="d", url="https://agents.example/echo")
    with serve_a2a(app) as url:
        card = httpx.get(f"{url}/.well-known/agent-card.json", timeout=10).json()
    assert card["supportedInterfaces"][0]["url"] == "https://agents.example/echo"


async def _send_and_get(url: str, text: str, *, streaming: bool) -> tuple[Any, Any]:
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import new_text_message
    from a2a.types.a2a_pb2 import GetTaskRequest, Role, SendMessageRequest

    client = await create_client(url, client_config=ClientConfig(streaming=streaming))
    try:
        events = [
            event
            async for event in client.send_message(
                SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))
            )
        ]
        first = events[0]
        task_id = first.task.id if first.HasField("task") else first.status_update.task_id
        task = await client.get_task(GetTaskRequest(id=task_id))
        return events, task
    finally:
        await client.close()


def test_official_client_send_message_then_get_task(served):
    from a2a.helpers import get_artifact_text, get_data_parts
    from a2a.types.a2a_pb2 import TaskState

    events, task = asyncio.run(_send_and_get(served.url, "file the report", streaming=False))
    assert len(events) == 1 and events[0].HasField("task")  # blocking SendMessage returns the finished task
    assert events[0].task.status.state == TaskState.TASK_STATE_COMPLETED
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert task.id == events[0].task.id
    assert [a.name for a in task.artifacts] == ["response"]
    assert get_artifact_text(task.artifacts[0]) == "echo: file the report"
    data = get_data_parts(task.artifacts[0].parts)
    assert data[0]["note"]["text"] == "file the report"
    assert tool_calls(served.world) == [("add_note", {"text": "file the report"}), ("count_notes", {})]


def test_official_client_streaming(served):
    from a2a.types.a2a_pb2 import TaskState

    events, task = asyncio.run(_send_and_get(served.url, "stream it", streaming=True))
    kinds = [next(f for f in ("task", "status_update", "artifact_update", "message") if e.HasField(f)) for e in events]
    assert "artifact_update" in kinds and kinds[-1] == "status_update"
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert task.status.state == TaskState.TASK_STATE_COMPLETED


def test_agent_exception_fails_the_task(served):
    from a2a.helpers import get_message_text
    from a2a.types.a2a_pb2 import TaskState

    _, task = asyncio.run(_send_and_get(served.url, "fail now", streaming=False))
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert "the echo agent was told to fail" in get_message_text(task.status.message)
    assert tool_calls(served.world) == []


def test_v1_json_rpc_on_the_wire(served):
    """A plain JSON-RPC client speaks protocol v1 method names (SendMessage, GetTask)."""
    headers = {"A2A-Version": "1.0"}
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "raw"}]}
    sent = httpx.post(
        served.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}},
        headers=headers,
        timeout=10,
    ).json()
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    got = httpx.post(
        served.url,
        json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}},
        headers=headers,
        timeout=10,
    ).json()
    assert got["result"]["id"] == task["id"]
    assert got["result"]["artifacts"][0]["parts"][0]["text"] == "echo: raw"
    missing = httpx.post(
        served.url,
        json={"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "no-such-task"}},
        headers=headers,
        timeout=10,
    ).json()
    assert "error" in missing


def test_serve_reports_a_busy_port():
    _world, tools = notes_world()
    app = build_a2a_app(EchoAgent(), tools, name="Echo", description="d")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(A2aServeError, match=f"127.0.0.1:{port}"), serve_a2a(app, port=port):
            pass


def test_server_stops_when_the_block_ends():
    _world, tools = notes_world()
    app = build_a2a_app(EchoAgent(), tools, name="Echo", description="d")
    with serve_a2a(app) as url:
        assert httpx.get(f"{url}/.well-known/agent-card.json", timeout=10).status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/.well-known/agent-card.json", timeout=2)


def test_a_request_head_that_never_completes_is_cut_off():
    """Slow clients (slowloris): a connection that has not sent its whole head within the deadline is closed, while
    a request sent at once is answered."""
    _world, tools = notes_world()
    app = build_a2a_app(EchoAgent(), tools, name="Echo", description="echo")
    with serve_a2a(app, header_timeout=0.4) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as slow:
            slow.sendall(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            slow.settimeout(60)  # a generous limit: without the deadline the server never closes it
            with contextlib.suppress(ConnectionResetError):
                assert slow.recv(1024) == b""
        assert httpx.get(f"{url}/.well-known/agent-card.json", timeout=5).status_code == 200
