"""Threads left blocked in `accept()` on a listening socket that was closed under them.

Closing a socket does not wake a thread blocked in `accept()` on it: the call goes on waiting on the old socket,
which keeps listening on its port. Worse, when a signal with a restarting handler (`SA_RESTART`, as asyncio's
`add_signal_handler` installs) or a stop and continue reaches that thread, the kernel restarts the call with the
same descriptor number, which by then may belong to another server's listening socket. The thread then takes that
server's next connection and never answers it: a request elsewhere in the process hangs, long after the test that
left the thread ended. (The suite saw exactly this: a test fixture's echo server took a request meant for the
website env's server several test files later.) `shutdown(SHUT_RDWR)` before `close()` wakes the thread.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from types import FrameType

_ACCEPT = socket.socket.accept.__code__


def accepting_closed_sockets() -> dict[int, str]:
    """Thread ident -> a description, for each thread now inside `socket.accept()` on a closed socket."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    found: dict[int, str] = {}
    for ident, innermost in sys._current_frames().items():
        frame: FrameType | None = innermost
        while frame is not None and frame.f_code is not _ACCEPT:
            frame = frame.f_back
        if frame is None:
            continue
        sock = frame.f_locals.get("self")
        if isinstance(sock, socket.socket) and sock.fileno() == -1:
            caller = frame.f_back
            where = f"{caller.f_code.co_filename}:{caller.f_lineno}" if caller is not None else "an unknown line"
            found[ident] = f"thread {names.get(ident, ident)!r}, in accept() called at {where}"
    return found


def lingering_accepts(patience: float = 1.0) -> dict[int, str]:
    """`accepting_closed_sockets()`, keeping only threads still there after `patience` seconds (a socket shut down
    just now wakes its thread at once; one closed without a shutdown never does)."""
    deadline = time.monotonic() + patience
    found = accepting_closed_sockets()
    while found and time.monotonic() < deadline:
        time.sleep(0.05)
        found = {ident: text for ident, text in accepting_closed_sockets().items() if ident in found}
    return found
