"""The trajectory: every tool call, trigger firing and rule change of a world, in order.

The digest covers everything but real (wall-clock) time, so replaying the same run with the same seed
and clock gives the same digest.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

Event = dict[str, Any]


class Trajectory:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.subscribers: list[Callable[[Event], None]] = []

    def record(self, kind: str, virtual_time: str, **fields: Any) -> Event:
        event: Event = {"seq": len(self.events), "kind": kind, "virtual_time": virtual_time, **fields}
        event["real_time"] = time.time()
        self.events.append(event)
        for subscriber in self.subscribers:
            subscriber(event)
        return event

    def digest(self) -> str:
        hasher = hashlib.sha256()
        for event in self.events:
            stable = {k: v for k, v in event.items() if k != "real_time"}
            hasher.update(json.dumps(stable, sort_keys=True, separators=(",", ":"), default=str).encode())
            hasher.update(b"\n")
        return hasher.hexdigest()

    def to_jsonl(self) -> bytes:
        return b"".join(json.dumps(e, sort_keys=True, default=str).encode() + b"\n" for e in self.events)

    def copy(self) -> Trajectory:
        clone = Trajectory()
        clone.events = list(self.events)
        return clone
