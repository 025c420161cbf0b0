"""`/ws` answered on the connection (`agentenv_openenv.socket`): the WebSocket protocol's duties, against the real
server and the `websockets` client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

LOOK = {"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}


def ws_url(serve: Callable[..., str], *args: str) -> str:
    return serve("support-refund", *args).replace("http://", "ws://") + "/ws"


async def exchange(ws: Any, message: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(message))
    reply: dict[str, Any] = json.loads(await ws.recv())
    return reply


def test_replies_keep_their_order_when_one_must_wait(serve: Callable[..., str]) -> None:
    """A final answer is graded in a task; the messages sent behind it are answered after it, in order."""
    url = ws_url(serve)

    async def scenario() -> None:
        async with websockets.connect(url) as ws:
            await exchange(ws, {"type": "reset", "data": {}})
            for message in (
                {"type": "step", "data": LOOK},
                {"type": "step", "data": {"answer": "Looked at the ticket only."}},
                {"type": "state"},
                {"type": "reset", "data": {"seed": 3}},  # a seed not set up yet: its setup is awaited too
                {"type": "state"},
                {"type": "step", "data": LOOK},
            ):
                await ws.send(json.dumps(message))  # all sent before any reply is read
            replies = [json.loads(await ws.recv()) for _ in range(6)]
        kinds = [r["type"] for r in replies]
        assert kinds == ["observation", "observation", "state", "observation", "state", "observation"], replies
        assert replies[0]["data"]["observation"]["type"] == "tool_result"
        final = replies[1]["data"]
        assert final["done"] is True and final["reward"] == 0.0 and final["observation"]["type"] == "final"
        assert replies[2]["data"]["done"] is True and replies[2]["data"]["step_count"] == 2
        assert replies[3]["data"]["observation"]["type"] == "prompt"
        assert replies[4]["data"]["seed"] == 3 and replies[4]["data"]["step_count"] == 0

    asyncio.run(scenario())


def test_fragments_binary_frames_pings_and_bad_messages(serve: Callable[..., str]) -> None:
    url = ws_url(serve)

    async def scenario() -> None:
        async with websockets.connect(url) as ws:
            text = json.dumps({"type": "reset", "data": {"episode_id": "in-three-parts"}})
            await ws.send([text[:10], text[10:20], text[20:]])  # one message in three frames
            reset = json.loads(await ws.recv())
            assert reset["data"]["observation"]["info"]["episode_id"] == "in-three-parts"
            await ws.send(json.dumps({"type": "step", "data": LOOK}).encode())  # a binary frame holding JSON
            assert json.loads(await ws.recv())["data"]["observation"]["ok"] is True
            await asyncio.wait_for(await ws.ping(), 10)  # answered by the protocol itself
            bad = await exchange(ws, {"type": "reset", "data": {"seed": "seven"}})
            assert bad["type"] == "error" and bad["data"]["code"] == "VALIDATION_ERROR"
            assert "seed" in bad["data"]["message"]
            await ws.send("{not json")
            assert json.loads(await ws.recv())["data"]["code"] == "INVALID_JSON"
            assert (await exchange(ws, {"type": "state"}))["data"]["episode_id"] == "in-three-parts"  # still there

    asyncio.run(scenario())


def test_close_message_ends_the_session_and_frees_its_slot(serve: Callable[..., str]) -> None:
    url = ws_url(serve, "--max-sessions", "1")

    async def scenario() -> None:
        async with websockets.connect(url) as ws:
            await exchange(ws, {"type": "reset", "data": {}})
            await ws.send(json.dumps({"type": "close"}))
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000
        async with websockets.connect(url) as again:  # the only slot is free again
            assert (await exchange(again, {"type": "reset", "data": {}}))["type"] == "observation"

    asyncio.run(scenario())


def test_other_paths_are_refused_and_oversized_messages_close_the_connection(serve: Callable[..., str]) -> None:
    url = ws_url(serve)

    async def scenario() -> None:
        with pytest.raises(InvalidStatus) as refused:
            async with websockets.connect(url.replace("/ws", "/elsewhere")):
                pass
        assert refused.value.response.status_code == 404
        async with websockets.connect(url, max_size=None) as ws:
            with pytest.raises(ConnectionClosed) as closed:  # while sending, or when reading the reply
                await ws.send("x" * (17 * 1024 * 1024))  # over uvicorn's default ws_max_size (16 MiB)
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009

    asyncio.run(scenario())
