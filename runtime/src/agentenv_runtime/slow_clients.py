"""Connections that never finish their request head: cut off by a deadline and a cap, so they cannot starve a server.

A served world (the gateway, OpenEnv, A2A) runs on uvicorn, which waits for a request's headers without a time
limit. 300 sockets that each send half a `GET /health` and then a byte now and then (slowloris) hold 300 file
descriptors: at a 256-descriptor limit `accept()` fails, `/health` goes unanswered, and asyncio logs a
traceback on every retry. Two bounds fix it at the cause, for every route and protocol a server has:

- a **header deadline**: a connection whose request head (the headers, up to the blank line) has not arrived
  within `header_timeout` seconds of its first byte being awaited is closed;
- a **cap on connections waiting for headers**: when one more would pass `max_waiting`, the one that has waited
  longest is closed. A real client sends its head at once, so it is never the oldest; the descriptors a flood
  can hold stay far below the process limit, and `accept()` never runs out.

Closures are counted, not logged one by one: one line per `report_every` seconds at most says how many were cut
off and why. `guarded_protocol` wraps uvicorn's HTTP protocol class (passed in, so the runtime does not import
uvicorn); `server_settings` gives the uvicorn settings that go with it.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

HEAD_END = b"\r\n\r\n"
READ_SIZE = 64 * 1024
"""Bytes one read takes from a connection. asyncio reads 256 KiB at a time, whether or not the request will be
admitted: 300 uploads that each arrive together with their head put 75 MiB in flight before any is refused (and
glibc may keep it). 64 KiB matches uvicorn's own flow-control mark, so a large upload loses nothing."""
DESCRIPTORS_KEPT_FREE = 48
"""Descriptors left for the server itself (listening sockets, the store, logs, a world's files)."""
logger = logging.getLogger("agentenv.served")


def descriptor_limit() -> int:
    """The process's soft limit on open file descriptors."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def default_max_waiting(limit: int | None = None) -> int:
    """A quarter of the descriptors not kept free, between 8 and 1,024: at a 256 limit, 52."""
    spare = (descriptor_limit() if limit is None else limit) - DESCRIPTORS_KEPT_FREE
    return max(8, min(1024, spare // 4))


@dataclass
class HeaderWaits:
    """The connections of one server still waiting for their request head, oldest first, and what was cut off."""

    header_timeout: float = 10.0
    max_waiting: int = field(default_factory=default_max_waiting)
    report_every: float = 60.0
    waiting: OrderedDict[Any, None] = field(default_factory=OrderedDict)
    timed_out: int = 0
    evicted: int = 0
    _last_report: float = 0.0

    def __post_init__(self) -> None:
        if self.header_timeout <= 0:
            raise ValueError(f"header_timeout must be > 0 seconds, got {self.header_timeout}")
        if self.max_waiting < 1:
            raise ValueError(f"max_waiting must be at least 1, got {self.max_waiting}")

    def start(self, connection: Any) -> None:
        """`connection` now waits for a request head; the longest waiter goes if that passes the cap."""
        self.waiting[connection] = None
        self.waiting.move_to_end(connection)
        while len(self.waiting) > self.max_waiting:
            oldest, _ = self.waiting.popitem(last=False)
            self.evicted += 1
            oldest.cut_off()
        self._maybe_report()

    def done(self, connection: Any) -> None:
        self.waiting.pop(connection, None)

    def expired(self, connection: Any) -> None:
        if self.waiting.pop(connection, "gone") is None:
            self.timed_out += 1
            connection.cut_off()
            self._maybe_report()

    def _maybe_report(self) -> None:
        now = time.monotonic()
        if (self.timed_out or self.evicted) and now - self._last_report >= self.report_every:
            self._last_report = now
            logger.warning(
                "closed %d connection(s) that sent no complete request head within %.0f s and %d over the cap "
                "of %d waiting for one (slow or stalled clients; counted since the last report)",
                self.timed_out, self.header_timeout, self.evicted, self.max_waiting,
            )
            self.timed_out = self.evicted = 0


def guarded_protocol(base: type[asyncio.Protocol], waits: HeaderWaits) -> type[asyncio.Protocol]:
    """A subclass of uvicorn's HTTP protocol `base` whose connections obey `waits` while reading a request head.

    A head counts as complete at its blank line; on a keep-alive connection the next request's first bytes start
    the wait again, so a second request dribbled slowly is cut off like a first. After an upgrade (WebSocket) the
    protocol is replaced and the bound no longer applies, as it should not.
    """

    class HeaderGuarded(base):  # type: ignore[valid-type, misc]
        _head_tail = b""
        _deadline: asyncio.TimerHandle | None = None
        _between_requests = False

        def connection_made(self, transport: Any) -> None:
            if hasattr(transport, "max_size"):  # asyncio's selector transport reads up to this many bytes at once
                transport.max_size = READ_SIZE
            super().connection_made(transport)
            self._await_head()

        def data_received(self, data: bytes) -> None:
            if self._between_requests:
                self._between_requests = False
                self._await_head()
            if self._deadline is not None:
                seen = self._head_tail + data
                if HEAD_END in seen:
                    self._head_done()
                else:
                    self._head_tail = seen[-3:]
            super().data_received(data)

        def on_response_complete(self) -> None:
            # An idle keep-alive connection is uvicorn's to close (timeout_keep_alive); it waits for a head
            # again, under the deadline and the cap, once the next request's first bytes arrive.
            self._between_requests = True
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_done()
            super().connection_lost(exc)

        def _await_head(self) -> None:
            self._head_tail = b""
            self._deadline = asyncio.get_running_loop().call_later(waits.header_timeout, waits.expired, self)
            waits.start(self)

        def _head_done(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            waits.done(self)

        def cut_off(self) -> None:
            """Close at once: the client sent no complete head in time (nothing is answered, nothing logged)."""
            self._head_done()
            self.transport.abort()

    HeaderGuarded.__name__ = HeaderGuarded.__qualname__ = f"HeaderGuarded{base.__name__}"
    return HeaderGuarded


def server_settings(base: type[asyncio.Protocol], waits: HeaderWaits | None = None) -> dict[str, Any]:
    """uvicorn `Config` keyword arguments that serve with `waits` (default: `HeaderWaits()`).

    The backlog also bounds how many connections asyncio accepts in one go (and the kernel queues); it is half the
    cap, so a flood accepted batch after batch cannot exhaust the descriptors before the cap's closures (which
    take effect an event-loop turn later) free them. At twice the cap, 300 sockets at a 256 limit still made
    `accept()` fail with EMFILE; at half, `/health` p99 stayed at its idle value (bench/slowloris.py).
    """
    waits = waits or HeaderWaits()
    return {"http": guarded_protocol(base, waits), "backlog": max(16, waits.max_waiting // 2)}
