"""A lean WebSocket client for benchmarks: RFC 6455 spoken directly on asyncio streams, text frames only.

A general client library (`websockets`) spends more CPU per message than a fast server does answering it, so
on a 2-core machine it caps what a benchmark can see. This one does as little as a Python client can: one
upgrade request, frames built with a zero masking key (allowed by RFC 6455 §5.3, so no payload is rewritten),
replies parsed from the stream. Pings are answered; fragmented messages are joined; a close frame ends the
session with an error. For loopback benchmarks only: a real client must pick an unpredictable key.
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct

TEXT, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x8, 0x9, 0xA, 0x0
ZERO_MASK = b"\x00\x00\x00\x00"


def frame(opcode: int, payload: bytes) -> bytes:
    """One final client frame (masked with the zero key, so the payload goes as it is)."""
    size = len(payload)
    if size < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
    elif size < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
    return head + ZERO_MASK + payload


class WireSocket:
    """One WebSocket session to `ws://host:port/path`, one message in flight at a time."""

    def __init__(self, host: str, port: int, path: str = "/ws") -> None:
        self.host, self.port, self.path = host, port, path
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        key = base64.b64encode(os.urandom(16)).decode()
        self.writer.write(
            f"GET {self.path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\nupgrade: websocket\r\n"
            f"connection: Upgrade\r\nsec-websocket-key: {key}\r\nsec-websocket-version: 13\r\n\r\n".encode()
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = head.split(b" ", 2)[1]
        if status != b"101":
            raise RuntimeError(f"ws://{self.host}:{self.port}{self.path} answered the upgrade with {status.decode()}")

    def send(self, text: str) -> None:
        assert self.writer is not None, "open() first"
        self.writer.write(frame(TEXT, text.encode()))

    async def recv(self) -> bytes:
        """The next whole data message's payload (pings answered on the way)."""
        assert self.reader is not None and self.writer is not None, "open() first"
        parts: list[bytes] = []
        while True:
            first, second = await self.reader.readexactly(2)
            size = second & 0x7F
            if size == 126:
                (size,) = struct.unpack("!H", await self.reader.readexactly(2))
            elif size == 127:
                (size,) = struct.unpack("!Q", await self.reader.readexactly(8))
            if second & 0x80:
                raise RuntimeError("the server sent a masked frame (RFC 6455 forbids it)")
            payload = await self.reader.readexactly(size)
            opcode = first & 0x0F
            if opcode == PING:
                self.writer.write(frame(PONG, payload))
            elif opcode == CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                raise RuntimeError(f"the server closed the session ({code} {payload[2:].decode(errors='replace')})")
            elif opcode != PONG:
                parts.append(payload)
                if first & 0x80:
                    return b"".join(parts)

    async def close(self) -> None:
        if self.writer is None:
            return
        try:
            self.writer.write(frame(CLOSE, struct.pack("!H", 1000)))
            await self.writer.drain()
        except ConnectionError:
            pass
        self.writer.close()
        self.writer = None
