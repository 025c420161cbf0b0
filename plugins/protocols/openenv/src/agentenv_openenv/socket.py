"""`/ws` answered on the connection itself: the WebSocket protocol `agentenv openenv serve` gives uvicorn.

uvicorn parses HTTP and hands each WebSocket upgrade to the protocol class of its `ws` setting; the stock ones
put every message on a queue for an ASGI task, which wakes, answers, and sends back through the server, and
they pause and resume reading around each message. Measured on a served support-refund world, that route cost
more CPU per step than the step's tool call. Here `websockets`' sans-I/O protocol parses the frames, and
`Session.answer` answers each message within the `data_received` call that brought it; only an answer that must
wait (grading a final answer, setting up a new seed) runs as a task, the connection's later messages queued
behind it so that replies keep their order. Once the session is open, data made only of whole single-frame text
messages, and every reply, go through `agentenv_openenv.frames` instead of the protocol's parser and framer
(anything else still goes to the protocol, which sees a stream that stops and starts at frame boundaries).

What the protocol keeps: the opening handshake (any path but `/ws` is answered 404, an opening from another
site's page 403: the server has no tokens), pings answered, fragmented
messages joined, the closing handshake, messages larger than uvicorn's `ws_max_size` refused (close 1009), and
back-pressure: reading stops while the client does not read its replies, or while many of its messages wait.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from agentenv_runtime import origin_refusal
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import State
from websockets.server import ServerProtocol

from agentenv_openenv.frames import client_texts, server_text
from agentenv_openenv.sessions import CLOSE_TIMEOUT, CapacityError, Reply, Session, SessionPool, error

PATH = "/ws"
WAITING_MESSAGES = 64
"""Messages of one connection that may wait for an earlier answer before reading from it stops."""
GOING_AWAY = 1012
"""Close code when the server shuts down ("service restart")."""
INVALID_DATA = 1007
"""Close code for a text message that is not UTF-8 (RFC 6455 §7.4.1)."""


@dataclass(frozen=True)
class Refusal:
    """A message refused before any session reads it: its error reply, and the close code to follow, if any."""

    reply: dict[str, Any]
    close: int | None = None


def session_socket(pool: SessionPool) -> type[asyncio.Protocol]:
    """The protocol class for uvicorn's `ws` setting, serving `/ws` sessions from `pool`."""
    return type("PoolSessionSocket", (SessionSocket,), {"pool": pool})


class SessionSocket(asyncio.Protocol):
    """One WebSocket connection, one session. uvicorn makes it with its config and server state, calls
    `connection_made`, then `data_received` with the upgrade request; `shutdown` when the server stops."""

    pool: ClassVar[SessionPool]

    def __init__(self, config: Any, server_state: Any, app_state: Any = None, _loop: Any = None) -> None:
        self.connections: set[Any] = server_state.connections
        self.tasks: set[asyncio.Task[Any]] = server_state.tasks
        self.loop = _loop or asyncio.get_event_loop()
        self.conn = ServerProtocol(max_size=config.ws_max_size)
        self.transport: asyncio.Transport | None = None
        self.session: Session | None = None
        self.inbox: deque[str | Refusal] = deque()
        self.parts: list[bytes | bytearray | memoryview] = []
        """The frames so far of a fragmented message."""
        self.binary = False
        """Whether the message being read came in a binary frame (else text)."""
        self.out: list[bytes] = []
        """Reply frames made here (not by `conn`), written before what `conn` has to send."""
        self.max_size: int | None = config.ws_max_size
        self.waiting: asyncio.Task[None] | None = None
        """The task answering a message that had to wait; later messages stay in `inbox` until it is done."""
        self.paused: set[str] = set()
        """Why reading is paused: "writes" (the client reads slowly), "inbox" (too many messages wait)."""
        self.closing = False
        """A close frame went out (or the handshake failed): no more answers."""
        self.close_timer: asyncio.TimerHandle | None = None
        self.refused = False
        """The server was at capacity: the error went out, the close follows the client's first message."""

    # ---- asyncio.Protocol ----------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio.Transport subclasses
        self.connections.add(self)

    def data_received(self, data: bytes) -> None:
        plain = client_texts(data, self.max_size) if self._between_frames() else None
        if plain is not None:
            for text in plain:
                self._message(text)
        else:
            self.conn.receive_data(data)
            for event in self.conn.events_received():
                if isinstance(event, Request):
                    self._handshake(event)
                elif isinstance(event, Frame):
                    self._frame(event)
        self._work()
        self._flush()

    def _between_frames(self) -> bool:
        """Whether the protocol is open and waits for a new frame (no partial frame or message buffered), so
        data may skip its parser. Reads two of its attributes; should a `websockets` release rename them, the
        answer is False and every frame takes the protocol's own path."""
        return (
            self.conn.state is State.OPEN
            and not self.parts
            and getattr(self.conn, "current_size", 0) is None
            and len(getattr(self.conn.reader, "buffer", b"?")) == 0
        )

    def eof_received(self) -> bool | None:
        self.conn.receive_eof()
        self._flush()
        return None  # asyncio closes the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.connections.discard(self)
        if self.close_timer is not None:
            self.close_timer.cancel()
        if self.waiting is not None:
            self.waiting.cancel()
        if self.session is not None:
            self.pool.close(self.session)
            self.session = None

    def pause_writing(self) -> None:
        self._pause("writes")

    def resume_writing(self) -> None:
        self._resume("writes")

    def shutdown(self) -> None:
        """The server stops: close the session with "going away" (or drop a connection not yet open)."""
        if self.transport is None or self.transport.is_closing():
            return
        if self.session is None or self.closing:
            self.transport.close()
            return
        self.conn.send_close(GOING_AWAY)
        self.closing = True
        self._flush()
        self.transport.close()

    # ---- the WebSocket -----------------------------------------------------------------------------------
    def _handshake(self, request: Request) -> None:
        if request.path.partition("?")[0] != PATH:
            self.conn.send_response(self.conn.reject(404, f"OpenEnv sessions are at {PATH}\n"))
            self.closing = True
            return
        foreign = origin_refusal({name.lower(): value for name, value in request.headers.raw_items()})
        if foreign is not None:
            self.conn.send_response(self.conn.reject(403, foreign + "\n"))
            self.closing = True
            return
        response = self.conn.accept(request)
        self.conn.send_response(response)
        if response.status_code != 101:
            self.closing = True
            return
        try:
            self.session = self.pool.open()
        except CapacityError as exc:
            self._refuse(exc)

    def _refuse(self, exc: CapacityError) -> None:
        """No session slot: send openenv-core's CAPACITY_REACHED error, then close (1000) once the client's first
        message arrives (or after `CLOSE_TIMEOUT`). Closing at once made that message's send fail in the client,
        which then saw a closed connection instead of the error it reads as the message's reply."""
        self.conn.send_text(json.dumps(exc.reply()).encode())
        self.refused = True
        self.close_timer = self.loop.call_later(CLOSE_TIMEOUT, self._end_refusal)

    def _end_refusal(self) -> None:
        if self.close_timer is not None:
            self.close_timer.cancel()
            self.close_timer = None
        if self.transport is None or self.transport.is_closing():
            return
        self._close()
        self._flush()

    def _frame(self, frame: Frame) -> None:
        """Data frames make messages (pings, pongs and closes are answered by `conn` itself)."""
        if frame.opcode in (Opcode.TEXT, Opcode.BINARY):
            self.parts = [frame.data]
            self.binary = frame.opcode is Opcode.BINARY
        elif frame.opcode is Opcode.CONT:
            self.parts.append(frame.data)
        else:
            return
        if frame.fin:
            message = b"".join(self.parts)
            self.parts = []
            try:
                text = message.decode("utf-8")
            except UnicodeDecodeError as exc:
                self._message(self._not_utf8(exc))
            else:
                self._message(text)

    def _not_utf8(self, exc: UnicodeDecodeError) -> Refusal:
        """A message that is not UTF-8 is refused, never read with U+FFFD in place of its bytes: a binary one
        with an INVALID_JSON error (messages are JSON text), a text one with that error and then the close RFC 6455
        requires for invalid text (1007), since the client's framing is broken."""
        where = f"byte {exc.start}"
        if self.binary:
            return Refusal(error(f"Invalid JSON: the binary message is not UTF-8 text ({where})", "INVALID_JSON"))
        message = f"Invalid JSON: the text message is not valid UTF-8 ({where}); closing (1007)"
        return Refusal(error(message, "INVALID_JSON"), close=INVALID_DATA)

    def _message(self, text: str | Refusal) -> None:
        self.inbox.append(text)
        if len(self.inbox) >= WAITING_MESSAGES:
            self._pause("inbox")

    def _work(self) -> None:
        """Answer the waiting messages in order, until one must be awaited."""
        if self.refused and self.inbox and not self.closing:  # the capacity error, sent already, is its reply
            self.inbox.clear()
            self._end_refusal()
            return
        while self.inbox and self.waiting is None and self.session is not None and not self.closing:
            item = self.inbox.popleft()
            if isinstance(item, Refusal):  # answered in its turn, so replies keep their order
                self._send(item.reply)
                if item.close is not None:
                    self._close(item.close)
                continue
            reply = self.session.answer(item)
            if isinstance(reply, Coroutine):
                self.waiting = self.loop.create_task(self._await(reply))
                self.tasks.add(self.waiting)
                break
            self._send(reply)
        if len(self.inbox) < WAITING_MESSAGES // 2:
            self._resume("inbox")

    async def _await(self, pending: Coroutine[Any, Any, Reply]) -> None:
        try:
            reply = await pending
        except Exception as exc:  # a bug, not a refusal: the client gets an error instead of a silent hang
            reply = error(f"internal error: {type(exc).__name__}: {exc}", "EXECUTION_ERROR")
        finally:
            if self.waiting is not None:
                self.tasks.discard(self.waiting)
            self.waiting = None
        if self.transport is None or self.transport.is_closing():
            return
        self._send(reply)
        self._work()
        self._flush()

    def _send(self, reply: Reply) -> None:
        if reply is None:
            self._close()
            return
        if self.conn.state is not State.OPEN:  # the client's close frame came with its last messages: no data
            return  # frame may follow a close, so their replies are dropped
        self.out.append(server_text((reply if isinstance(reply, str) else json.dumps(reply)).encode()))

    def _close(self, code: int = 1000) -> None:
        if self.conn.state is State.OPEN:
            self.conn.send_close(code)
        self.closing = True

    def _flush(self) -> None:
        """Write what the protocol has to send; close the connection once the protocol says so."""
        assert self.transport is not None
        chunks = self.conn.data_to_send()
        if self.out:  # replies first: `conn` may have queued a close after them (or a pong, which may go anywhere)
            chunks = self.out + chunks
            self.out = []
        if chunks:
            self.transport.write(b"".join(chunks))
        if b"" in chunks:  # the closing handshake is over (or the connection failed): end TCP
            self.transport.close()
        elif self.closing and self.close_timer is None:  # wait for the client's close frame, not for ever
            self.close_timer = self.loop.call_later(CLOSE_TIMEOUT, self.transport.close)

    def _pause(self, reason: str) -> None:
        if not self.paused and self.transport is not None:
            self.transport.pause_reading()
        self.paused.add(reason)

    def _resume(self, reason: str) -> None:
        if reason in self.paused:
            self.paused.discard(reason)
            if not self.paused and self.transport is not None and not self.transport.is_closing():
                self.transport.resume_reading()
