"""The direct path for whole single-frame text messages (`agentenv_openenv.frames`) and when the socket takes it."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest
from agentenv_openenv.frames import client_texts, server_text
from agentenv_openenv.socket import SessionSocket
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from .test_openenv_socket import client_frame

UPGRADE = (
    b"GET /ws HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
    b"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n"
)


def test_whole_text_frames_are_unmasked_and_decoded() -> None:
    texts = ["", "short", "é" * 70, "x" * 300, "y" * 65_535]
    data = b"".join(client_frame(t.encode(), mask=os.urandom(4)) for t in texts)
    assert client_texts(data, None) == texts
    assert client_texts(b"", None) == []


@pytest.mark.parametrize(
    "data",
    [
        client_frame(b"half a frame")[:-3],
        client_frame(b"whole") + client_frame(b"then half")[:4],
        client_frame(b"binary", opcode=0x2),
        client_frame(b"not final", fin=False),
        client_frame(b"ping", opcode=0x9),
        client_frame(b"x" * 70_000),  # a 64-bit length
        client_frame(b"\xff\xfe not UTF-8"),
        bytes((0x81, 5)) + b"plain",  # unmasked
        bytes((0xC1, 0x80 | 5)) + b"\0\0\0\0" + b"rsv1!",  # an extension bit
    ],
)
def test_anything_else_is_left_to_the_protocol(data: bytes) -> None:
    assert client_texts(data, None) is None


def test_messages_over_the_size_limit_are_left_to_the_protocol() -> None:
    assert client_texts(client_frame(b"x" * 100), 100) == ["x" * 100]
    assert client_texts(client_frame(b"x" * 101), 100) is None  # the protocol closes with 1009


@pytest.mark.parametrize("size", [0, 125, 126, 65_535, 65_536])
def test_server_frames_parse_as_the_protocol_reads_them(size: int) -> None:
    payload = os.urandom(size)
    reader = StreamReader()
    reader.feed_data(server_text(payload))
    parser = Frame.parse(reader.read_exact, mask=False)
    with pytest.raises(StopIteration) as done:
        next(parser)
    frame = done.value.value
    assert frame.opcode is Opcode.TEXT and frame.fin and bytes(frame.data) == payload


def test_the_socket_takes_the_direct_path_only_between_frames_of_an_open_session() -> None:
    """`_between_frames` reads two `websockets` attributes; this fails if a release renames them (the direct
    path would silently be off)."""
    config = SimpleNamespace(ws_max_size=1 << 20)
    socket = SessionSocket(config, SimpleNamespace(connections=set(), tasks=set()), _loop=object())
    assert not socket._between_frames()  # the handshake is the protocol's
    socket.conn.receive_data(UPGRADE)
    [request] = socket.conn.events_received()
    socket.conn.send_response(socket.conn.accept(request))
    assert socket._between_frames()
    socket.conn.receive_data(client_frame(b"half")[:3])
    assert not socket._between_frames()
    socket.conn.receive_data(client_frame(b"half")[3:])
    assert socket._between_frames()
    socket.conn.receive_data(client_frame(b"part", fin=False))
    assert not socket._between_frames()
