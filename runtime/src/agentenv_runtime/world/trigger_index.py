"""What the world's hot path reads about its triggers, built once per change instead of once per tool call.

A tool call used to ask every armed trigger whether it cares; with a thousand armed that is most of the call.
The index keeps event triggers by the tool they watch (kinds that say so with `watched_tools()`; any other
kind is asked about every call) and the earliest time anything is due, so a call that concerns no trigger
costs two dictionary lookups.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from agentenv.contracts import Message, ToolCallEvent, TriggerKind

from agentenv_runtime.world.triggers import TriggerDef

MESSAGE_KINDS = frozenset({"persona", "tool_call"})


@dataclass
class Pending:
    """A firing whose actions wait for their time: a delay (`queued`) or working hours (`deferred`)."""

    due: datetime
    trigger: str
    event: dict[str, Any] | None
    depth: int
    order: int

    def state(self) -> dict[str, Any]:
        return {"due": self.due.isoformat(), "trigger": self.trigger, "event": self.event, "depth": self.depth,
                "order": self.order}  # fmt: skip

    @classmethod
    def from_state(cls, saved: dict[str, Any]) -> Pending:
        return cls(
            datetime.fromisoformat(saved["due"]), saved["trigger"], saved["event"], saved["depth"], saved["order"]
        )


def event_state(event: ToolCallEvent | None) -> dict[str, Any] | None:
    """The event that fired a trigger, as JSON-able data (a waiting firing is part of every snapshot)."""
    return asdict(event) if event is not None else None


def event_from_state(saved: dict[str, Any] | None) -> ToolCallEvent | None:
    if saved is None:
        return None
    message = saved.get("message")
    if message is not None:
        message = Message(**{**message, "recipients": tuple(message["recipients"])})
    return ToolCallEvent(**{**saved, "message": message})


@dataclass
class Armed:
    """A registered trigger and its runtime state (part of every snapshot)."""

    definition: TriggerDef
    kind: TriggerKind[Any]
    anchor: datetime | None = None
    fired: int = 0
    next_at: datetime | None = None
    last_holds: bool = False
    enabled: bool = True
    last_error: dict[str, Any] | None = None
    """Why the last firing failed (an action's tool error, a reply that could not be sent, a trigger loop)."""
    firing: bool = False
    """Its actions are running now (an executor agent at work, a barrier holding a call)."""
    waiting: str | None = None
    """`queued` (a delay) or `deferred` (outside working hours) while a firing's actions wait their time."""

    @property
    def spent(self) -> bool:
        """Fired, and neither the definition nor the kind asks for more."""
        return self.fired > 0 and not (self.definition.repeat or self.kind.repeats())

    @property
    def status(self) -> str:
        """The reference protocol's trigger status: `armed` (waiting), `firing` (its actions are running),
        `queued` (a delay) or `deferred` (outside working hours) before its actions run, `fired` (spent),
        `failed` (spent, and an action of its last firing failed: `last_error` says why) or `cancelled`."""
        if not self.enabled:
            return "cancelled"
        if self.firing:
            return "firing"
        if self.waiting is not None:
            return self.waiting
        if not self.spent:
            return "armed"
        return "failed" if self.last_error is not None else "fired"


class TriggerIndex:
    """Event triggers by the tool they watch (rebuilt when triggers are added, removed or restored), and the
    timeline: a heap of time triggers by their next due time, kept up to date entry by entry as triggers are
    rescheduled (a firing reschedules one trigger; rebuilding the whole index for it made a simulated week
    cost O(firings x triggers)). Heap entries are checked when they reach the top: one whose trigger has
    since moved, been disabled or been replaced is dropped there."""

    def __init__(self, triggers: Mapping[str, Armed], pending: list[Pending]) -> None:
        self.by_tool: dict[str, list[Armed]] = {}
        self.every_call: list[Armed] = []
        order: dict[str, int] = {}
        for position, (trigger_id, armed) in enumerate(triggers.items()):
            order[trigger_id] = position
            if armed.next_at is not None:  # scheduled by time, never by an event
                continue
            watched = getattr(armed.kind, "watched_tools", None)
            tools = watched() if watched is not None else None
            if tools is None:
                self.every_call.append(armed)
            else:
                for tool in tools:
                    self.by_tool.setdefault(tool, []).append(armed)
        self._order = order
        self._merged: dict[str, list[Armed]] = {}
        self.watch_messages = any(a.definition.kind in MESSAGE_KINDS for a in triggers.values())
        self._triggers = triggers
        self._pending = pending
        self._soonest_pending: Pending | bool | None = False  # False: not computed since the last change
        self._pushed = 0
        self._heap: list[tuple[datetime, str, int, Armed]] = []
        for armed in triggers.values():
            self.rescheduled(armed)
        heapq.heapify(self._heap)

    def candidates(self, tool: str) -> list[Armed]:
        """The triggers a call of `tool` may fire, in the order they were registered."""
        if tool not in self.by_tool:
            return self.every_call
        merged = self._merged.get(tool)
        if merged is None:
            merged = sorted([*self.by_tool[tool], *self.every_call], key=lambda a: self._order[a.definition.id])
            self._merged[tool] = merged
        return merged

    def rescheduled(self, armed: Armed) -> None:
        """`armed.next_at` changed (it stays a time trigger): put it on the timeline at its new time."""
        if armed.enabled and armed.next_at is not None:
            self._pushed += 1
            heapq.heappush(self._heap, (armed.next_at, armed.definition.id, self._pushed, armed))
            if len(self._heap) > 4 * len(self._triggers) + 64:  # stale entries (a clock reset re-plans all): compact
                self._heap = [entry for entry in self._heap if self._current(entry)]
                heapq.heapify(self._heap)

    def pending_changed(self) -> None:
        self._soonest_pending = False

    def _current(self, entry: tuple[datetime, str, int, Armed]) -> bool:
        due, trigger_id, _, armed = entry
        return armed.enabled and armed.next_at == due and self._triggers.get(trigger_id) is armed

    def _timed(self) -> Armed | None:
        heap = self._heap
        while heap and not self._current(heap[0]):
            heapq.heappop(heap)
        return heap[0][3] if heap else None

    def _soonest(self) -> Pending | None:
        if self._soonest_pending is False:
            self._soonest_pending = min(self._pending, key=lambda p: (p.due, p.order)) if self._pending else None
        return self._soonest_pending  # type: ignore[return-value]

    @property
    def earliest(self) -> datetime | None:
        """When the next thing on the timeline is due (None: nothing is)."""
        item = self.next_due()
        if item is None:
            return None
        return item.due if isinstance(item, Pending) else item.next_at

    def next_due(self) -> Armed | Pending | None:
        """The next thing on the timeline; a waiting firing goes before a time trigger due at the same instant."""
        timed, pending = self._timed(), self._soonest()
        if pending is None:
            return timed
        if timed is None or timed.next_at is None or pending.due <= timed.next_at:
            return pending
        return timed
