"""Cleanups that must run as the interpreter begins shutting down (its own module: the sandbox, the layer store and
the process groups all register theirs, and none of them may import another only for this)."""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable


def at_shutdown(action: Callable[[], None]) -> None:
    """Run `action` when the interpreter starts shutting down, before it joins worker threads: a tool call
    blocked on a command in a worker thread would otherwise keep an interrupted run alive until it ends."""
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        register(action)
    atexit.register(action)
