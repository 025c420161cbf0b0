"""`/ws` answered on the connection (`agentenv_openenv.socket`): the WebSocket protocol's duties, against the real
server and the `websockets` client."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
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


def client_frame(payload: bytes, opcode: int = 0x1, fin: bool = True, mask: bytes = b"\x5a\x17\xc3\x08") -> bytes:
    """A masked client frame, built by hand (the library client never sends two frames in one write)."""
    size = len(payload)
    first = (0x80 if fin else 0) | opcode
    if size < 126:
        head = bytes((first, 0x80 | size))
    elif size < 1 << 16:
        head = bytes((first, 0x80 | 126)) + size.to_bytes(2, "big")
    else:
        head = bytes((first, 0x80 | 127)) + size.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def raw_session(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        b"GET /ws HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
        b"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n"
    )
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101"), head
    return reader, writer


async def server_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    first, second = await asyncio.wait_for(reader.readexactly(2), 10)
    size = second & 0x7F
    if size == 126:
        size = int.from_bytes(await reader.readexactly(2), "big")
    elif size == 127:
        size = int.from_bytes(await reader.readexactly(8), "big")
    assert not second & 0x80, "a server frame must not be masked"
    return first & 0x0F, await reader.readexactly(size)


def message(kind: str, **data: Any) -> bytes:
    return json.dumps({"type": kind, "data": data} if data or kind != "state" else {"type": kind}).encode()


def test_frames_in_one_write_split_frames_and_long_ones_are_all_answered_in_order(serve: Callable[..., str]) -> None:
    """Whole text frames take the direct path, anything else the protocol's parser; both kinds interleave."""
    url = ws_url(serve)
    long_id = "x" * 200  # a 16-bit length

    async def scenario() -> None:
        reader, writer = await raw_session(url)
        writer.write(client_frame(message("reset", episode_id=long_id)) + client_frame(message("step", **LOOK)))
        replies = [json.loads((await server_frame(reader))[1]) for _ in range(2)]
        assert replies[0]["data"]["observation"]["info"]["episode_id"] == long_id
        assert replies[1]["data"]["observation"]["ok"] is True
        split = client_frame(message("state"))
        writer.write(split[:5])  # half a frame: the protocol buffers it
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(split[5:] + client_frame(message("step", **LOOK)))
        state = json.loads((await server_frame(reader))[1])
        assert state["type"] == "state" and state["data"]["step_count"] == 1
        assert json.loads((await server_frame(reader))[1])["data"]["observation"]["ok"] is True
        text = message("step", **LOOK)  # a fragmented message, then a whole one in the same write
        writer.write(client_frame(text[:7], fin=False) + client_frame(text[7:], opcode=0x0) + client_frame(text))
        for _ in range(2):
            assert json.loads((await server_frame(reader))[1])["data"]["observation"]["ok"] is True
        writer.write(client_frame(message("state")))  # and the direct path again
        assert json.loads((await server_frame(reader))[1])["data"]["step_count"] == 4
        writer.close()

    asyncio.run(scenario())


def test_messages_that_are_not_utf8_are_refused_never_read_with_replacement_characters(
    serve: Callable[..., str],
) -> None:
    url = ws_url(serve)
    not_utf8 = b'{"type": "state", "x": "\xff"}'

    async def scenario() -> None:
        reader, writer = await raw_session(url)
        writer.write(client_frame(message("reset", episode_id="kept")))
        assert json.loads((await server_frame(reader))[1])["type"] == "observation"
        writer.write(client_frame(not_utf8, opcode=0x2) + client_frame(message("state")))  # binary, then a good one
        refused = json.loads((await server_frame(reader))[1])
        assert refused["type"] == "error" and refused["data"]["code"] == "INVALID_JSON", refused
        assert "not UTF-8" in refused["data"]["message"] and "byte 24" in refused["data"]["message"]
        state = json.loads((await server_frame(reader))[1])
        assert state["type"] == "state" and state["data"]["episode_id"] == "kept"  # the session goes on
        half = len(not_utf8) // 2  # a text message (here in two fragments) that is not UTF-8: error, then 1007
        writer.write(client_frame(not_utf8[:half], fin=False) + client_frame(not_utf8[half:], opcode=0x0))
        opcode, payload = await server_frame(reader)
        assert opcode == 0x1 and "not valid UTF-8" in json.loads(payload)["data"]["message"]
        opcode, payload = await server_frame(reader)
        assert opcode == 0x8 and int.from_bytes(payload[:2], "big") == 1007
        writer.close()

    asyncio.run(scenario())


BAD_VALUES = {
    "NaN": ('{"type": "step", "data": {"tool": "get_ticket", "arguments": {"ticket_id": NaN}}}', "INVALID_JSON"),
    "Infinity": ('{"type": "mcp", "data": {"jsonrpc": "2.0", "id": Infinity, "method": "tools/list"}}', "INVALID_JSON"),
    "huge int": ('{"type": "reset", "data": {"seed": ' + "9" * 5000 + "}}", "INVALID_JSON"),
    "deep nesting": ('{"type": "step", "data": ' + "[" * 5000 + "]" * 5000 + "}", "INVALID_JSON"),
    "lone surrogate": ('{"type": "reset", "data": {"episode_id": "\\ud800"}}', "INVALID_JSON"),
    "type not a string": ('{"type": ["reset"]}', "UNKNOWN_TYPE"),
    "data not an object": ('{"type": "step", "data": [1]}', "VALIDATION_ERROR"),
    "tool not a string": ('{"type": "step", "data": {"tool": 5, "arguments": {}}}', "VALIDATION_ERROR"),
    "seed not an integer": ('{"type": "reset", "data": {"seed": 1.5}}', "VALIDATION_ERROR"),
}


def strict_json(text: str | bytes) -> Any:
    """JSON as a strict reader takes it: `NaN` or `Infinity` in it fail the test."""

    def constant(name: str) -> None:
        raise AssertionError(f"{name} in a reply: {text[:200]!r}")

    return json.loads(text, parse_constant=constant)


def test_bad_json_values_get_an_error_and_the_session_goes_on(serve: Callable[..., str]) -> None:
    """Each refused with an error message naming the problem; none ends the connection or reaches a reply as a
    value no strict JSON reader takes (NaN echoed back as an MCP id, say)."""
    url = ws_url(serve)

    async def scenario() -> None:
        async with websockets.connect(url) as ws:
            await exchange(ws, {"type": "reset", "data": {"episode_id": "still-here"}})
            for name, (text, code) in BAD_VALUES.items():
                await ws.send(text)
                parsed = strict_json(await ws.recv())
                assert parsed["type"] == "error" and parsed["data"]["code"] == code, (name, parsed)
                state = await exchange(ws, {"type": "state"})
                assert state["data"]["episode_id"] == "still-here", (name, state)

    asyncio.run(scenario())


def test_a_close_sent_with_messages_ends_cleanly(serve: Callable[..., str]) -> None:
    url = ws_url(serve)

    async def scenario() -> None:
        reader, writer = await raw_session(url)  # a step and the close frame in one write
        writer.write(client_frame(message("reset")) + client_frame(message("step", **LOOK)))
        writer.write(client_frame((1000).to_bytes(2, "big"), opcode=0x8))
        frames = []
        while True:
            opcode, payload = await server_frame(reader)
            frames.append(opcode)
            if opcode == 0x8:
                assert int.from_bytes(payload[:2], "big") == 1000
                break
        assert frames[-1] == 0x8 and all(op == 0x1 for op in frames[:-1])
        assert await asyncio.wait_for(reader.read(), 10) == b""  # the server ended TCP after the handshake
        writer.close()

        reader, writer = await raw_session(url)  # the server is still well
        writer.write(client_frame(message("reset")))
        assert json.loads((await server_frame(reader))[1])["type"] == "observation"
        writer.close()

    asyncio.run(scenario())


# ---- the guards of a server without tokens: no other site's page, loopback unless --allow-remote ----------
def test_ws_from_a_foreign_origin_is_refused(serve: Callable[..., str]) -> None:
    url = ws_url(serve)

    async def scenario() -> None:
        with pytest.raises(InvalidStatus) as refused:
            async with websockets.connect(url, origin=websockets.Origin("https://evil.example")):
                pass
        assert refused.value.response.status_code == 403
        assert b"evil.example" in refused.value.response.body
        own = websockets.Origin(url.replace("ws://", "http://").removesuffix("/ws"))
        async with websockets.connect(url, origin=own) as ws:  # the server's own origin, and no origin at all
            assert (await exchange(ws, {"type": "reset", "data": {}}))["type"] == "observation"
        async with websockets.connect(url) as ws:
            reply = await exchange(ws, {"type": "reset", "data": {}})
            assert reply["type"] == "observation"
            assert (await exchange(ws, {"type": "step", "data": LOOK}))["type"] == "observation"

    asyncio.run(scenario())


def test_the_asgi_app_ws_refuses_a_foreign_origin() -> None:
    from agentenv_openenv.app import build_app
    from agentenv_rl.api import Template
    from starlette.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    app = build_app(Template("support-refund"), 2)
    with TestClient(app) as client:
        foreign = {"origin": "https://evil.example"}
        with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws", headers=foreign) as ws:
            ws.receive_text()
        assert refused.value.code == 1008
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "reset", "data": {}})
            assert ws.receive_json()["type"] == "observation"


def test_the_asgi_app_ws_refuses_what_is_not_utf8_json_and_goes_on() -> None:
    from agentenv_openenv.app import build_app
    from agentenv_rl.api import Template
    from starlette.testclient import TestClient

    app = build_app(Template("support-refund"), 2)
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"episode_id": "asgi"}})
        assert ws.receive_json()["type"] == "observation"
        ws.send_bytes(b'{"type": "state", "x": "\xff"}')
        refused = ws.receive_json()
        assert refused["data"]["code"] == "INVALID_JSON" and "not UTF-8" in refused["data"]["message"]
        ws.send_text('{"type": "step", "data": {"tool": "get_ticket", "arguments": {"ticket_id": NaN}}}')
        assert ws.receive_json()["data"]["code"] == "INVALID_JSON"
        ws.send_json({"type": "state"})
        assert ws.receive_json()["data"]["episode_id"] == "asgi"


def test_a_non_loopback_host_needs_allow_remote(tmp_path: Path) -> None:
    agentenv = Path(sys.executable).with_name("agentenv")
    proc = subprocess.run(
        [str(agentenv), "openenv", "serve", "support-refund", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "--host 0.0.0.0 is not a loopback address" in proc.stderr and "--allow-remote" in proc.stderr
