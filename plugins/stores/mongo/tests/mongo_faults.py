"""A fault-injecting proxy for the MongoDB wire protocol: the kits' HTTP `FaultProxy` cannot sit in front of a
MongoDB server, so this one copies every connection's bytes both ways and fails the next N data commands.

A fault the kit asks for maps onto what a driver meets in production: a 503 (the kit's server error) drops the
connection mid-command, as a crashed or failing-over server does; a 429 (the kit's throttle) answers the command
with MongoDB's "overloaded" error (code 462, labels `SystemOverloadedError` and `RetryableError`). `LOST` lets the
command reach the server and drops the connection before its answer: the write happened, the driver cannot know.
Handshakes and monitoring (`hello`, `ping`, authentication) always pass, so only the store's own commands fail.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from typing import Any

import bson
from agentenv_testing.faults import Fault

OP_MSG = 2013
PASS = frozenset({"hello", "ismaster", "ping", "buildinfo", "endsessions", "saslstart", "saslcontinue"})
LOST = Fault(504)
"""The command runs, its answer is lost (the connection drops after the server got it)."""
OVERLOADED = {
    "ok": 0.0,
    "errmsg": "injected: the server is overloaded",
    "code": 462,
    "codeName": "IngressRequestRateLimitExceeded",
    "errorLabels": ["SystemOverloadedError", "RetryableError"],
}


class MongoFaultProxy:
    """A TCP proxy on 127.0.0.1 in front of `upstream` (HOST:PORT); `url` is a connection string to it."""

    def __init__(self, upstream: str) -> None:
        host, _, port = upstream.rpartition(":")
        self.upstream = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self._lock = threading.Lock()
        self._pending: list[tuple[Fault, str]] = []
        self._open: set[socket.socket] = set()
        self.injected = 0
        self.forwarded = 0

    @property
    def url(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/"

    def fail_next(self, count: int, fault: Fault | None = None, command: str = "") -> None:
        """Fail the next `count` data commands (only `command`s, when named) with `fault` (by default a dropped
        connection)."""
        with self._lock:
            self._pending.extend([(fault or Fault(), command.lower())] * count)

    def _take(self, command: str) -> Fault | None:
        with self._lock:
            if command not in PASS and self._pending and self._pending[0][1] in ("", command):
                self.injected += 1
                return self._pending.pop(0)[0]
            self.forwarded += 1
            return None

    def start(self) -> MongoFaultProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes _accept: a close alone leaves it in accept() for good
        self.listener.close()
        with self._lock:
            sockets, self._open = list(self._open), set()
        for sock in sockets:
            _close(sock)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # stopped
            server = socket.create_connection(self.upstream)
            with self._lock:
                self._open |= {client, server}
            lose_answer = threading.Event()
            threading.Thread(target=self._requests, args=(client, server, lose_answer), daemon=True).start()
            threading.Thread(target=_answers, args=(server, client, lose_answer), daemon=True).start()

    def _requests(self, client: socket.socket, server: socket.socket, lose_answer: threading.Event) -> None:
        """Forward the client's messages one by one, failing those a pending fault is for."""
        try:
            while True:
                message = _read_message(client)
                if message is None:
                    break
                fault = self._take(_command(message))
                if fault is None:
                    server.sendall(message)
                elif fault.status == 429:
                    client.sendall(_error_reply(message))
                elif fault.status == LOST.status:
                    lose_answer.set()
                    server.sendall(message)
                    return  # _answers drops the connection in place of the answer
                else:
                    break  # drop the connection mid-command
        except OSError:
            pass
        _close(client)
        _close(server)


def _read_exactly(sock: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _read_message(sock: socket.socket) -> bytes | None:
    """One wire message (16-byte header: length, requestID, responseTo, opCode; then the body)."""
    header = _read_exactly(sock, 16)
    if header is None:
        return None
    (length,) = struct.unpack_from("<i", header)
    body = _read_exactly(sock, length - 16)
    return None if body is None else header + body


def _command(message: bytes) -> str:
    """The command an OP_MSG runs (its body's first field), lower-cased; '' for any other message."""
    (op_code,) = struct.unpack_from("<i", message, 12)
    if op_code != OP_MSG or message[20] != 0:  # after the flag bits: section kind 0, the command's body
        return ""
    (size,) = struct.unpack_from("<i", message, 21)
    body: dict[str, Any] = bson.decode(message[21 : 21 + size])
    return next(iter(body), "").lower()


def _error_reply(request: bytes) -> bytes:
    """An OP_MSG answer to `request` holding the overloaded error."""
    (request_id,) = struct.unpack_from("<i", request, 4)
    payload = struct.pack("<I", 0) + b"\x00" + bson.encode(OVERLOADED)
    return struct.pack("<iiii", 16 + len(payload), 0, request_id, OP_MSG) + payload


def _answers(server: socket.socket, client: socket.socket, lose_answer: threading.Event) -> None:
    """The server's answers back to the client (streamed `hello` answers included), but for one to be lost."""
    try:
        while (message := _read_message(server)) is not None and not lose_answer.is_set():
            client.sendall(message)
    except OSError:
        pass
    _close(server)
    _close(client)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
