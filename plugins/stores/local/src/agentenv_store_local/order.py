"""Write order for stores without a shared sequence: nanosecond stamps that never repeat within a process.

The `sqlite` store numbers writes with a sequence kept in its file. Cloud document stores have no such
counter that costs nothing, so they order "newest first" by wall-clock nanoseconds instead, made strictly
increasing within a process so two quick writes never tie; writes from machines whose clocks disagree by
more than the gap between them may list in either order.
"""

from __future__ import annotations

import threading
import time

_lock = threading.Lock()
_last = 0


def next_write_stamp() -> int:
    """Nanoseconds since the epoch, strictly greater than any stamp this process returned before."""
    global _last
    with _lock:
        _last = max(time.time_ns(), _last + 1)
        return _last
