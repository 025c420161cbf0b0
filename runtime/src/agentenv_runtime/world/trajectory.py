"""The trajectory: every tool call, trigger firing and rule change of a world, in order.

The digest covers everything but real (wall-clock) time, so replaying the same run with the same seed
and clock gives the same digest.

Memory stays flat however long a world lives: events are kept in memory in chunks, and every chunk but
the newest two is written to a spill file (an anonymous temporary file, gone with the process) as JSON
lines, then dropped. Reading old events reads them back; the digest of spilled chunks is computed once,
when they are written, so `digest()` is the same as if every event had stayed in memory.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any, overload

Event = dict[str, Any]
CHUNK_EVENTS = 2048
"""Events per chunk; two chunks stay in memory, older ones are spilled."""


_STABLE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)
"""One encoder for every line (`json.dumps` with options builds a new one per call)."""


def _stable_line(event: Event) -> bytes:
    stable = {k: v for k, v in event.items() if k != "real_time"}
    return _STABLE.encode(stable).encode() + b"\n"


def _lines(event: Event) -> tuple[bytes, bytes]:
    """(the stable line the digest hashes, the stored line) from one encoding of the event: the stored line is
    the stable one with `real_time` spliced in first, so spilling or storing an event costs one `json.dumps`
    (the encoding was half the cost of a world call once chunks spill)."""
    stable = _stable_line(event)
    if "real_time" not in event:
        return stable, stable
    value = event["real_time"]
    real_time = (repr(value) if type(value) is float and math.isfinite(value) else _STABLE.encode(value)).encode()
    rest = b"}\n" if stable == b"{}\n" else b"," + stable[1:]
    return stable, b'{"real_time":' + real_time + rest


def _jsonl_line(event: Event) -> bytes:
    return _lines(event)[1]


def trajectory_digest(events: Iterable[Event]) -> str:
    """The digest of events as `Trajectory.digest` computes it (used to check a stored trajectory)."""
    hasher = hashlib.sha256()
    for event in events:
        hasher.update(_stable_line(event))
    return hasher.hexdigest()


class EventLog(Sequence[Event]):
    """A list of events whose old chunks live in a spill file: indexing, slicing, `len`, iteration, append."""

    def __init__(self, chunk: int = CHUNK_EVENTS) -> None:
        self.chunk = chunk
        self.tail: list[Event] = []
        self.spilled = 0
        self._offsets: list[int] = []
        """Byte offset of each spilled chunk in the spill file (and the end, once one is written)."""
        self._file: IO[bytes] | None = None
        self._hasher = hashlib.sha256()
        """Digest state over the spilled events (stable form)."""
        self._cached: tuple[int, list[Event]] | None = None

    def append(self, event: Event) -> None:
        self.tail.append(event)
        if len(self.tail) >= 2 * self.chunk:
            self._spill(self.tail[: self.chunk])
            del self.tail[: self.chunk]

    def _spill(self, events: list[Event]) -> None:
        if self._file is None:
            import tempfile  # only a long trajectory spills to disk: not on a short run's start path

            self._file = tempfile.TemporaryFile(prefix="agentenv-trajectory-")  # noqa: SIM115 - lives with the log
            self._offsets = [0]
        self._file.seek(self._offsets[-1])
        stored = []
        for event in events:
            stable, line = _lines(event)
            self._hasher.update(stable)
            stored.append(line)
        lines = b"".join(stored)
        self._file.write(lines)
        self._offsets.append(self._offsets[-1] + len(lines))
        self.spilled += len(events)

    def _chunk(self, index: int) -> list[Event]:
        if self._cached is not None and self._cached[0] == index:
            return self._cached[1]
        assert self._file is not None
        start, end = self._offsets[index], self._offsets[index + 1]
        self._file.seek(start)
        events = [json.loads(line) for line in self._file.read(end - start).splitlines()]
        self._cached = (index, events)
        return events

    def __len__(self) -> int:
        return self.spilled + len(self.tail)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1 and start >= self.spilled:
                return self.tail[start - self.spilled : stop - self.spilled]
            return [self[i] for i in range(start, stop, step)]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("trajectory index out of range")
        if index >= self.spilled:
            return self.tail[index - self.spilled]
        return self._chunk(index // self.chunk)[index % self.chunk]

    def __iter__(self) -> Iterator[Event]:
        for index in range(len(self._offsets) - 1):
            yield from self._chunk(index)
        yield from list(self.tail)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EventLog | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventLog({len(self)} events, {self.spilled} spilled)"

    def digest(self) -> str:
        hasher = self._hasher.copy()
        for event in self.tail:
            hasher.update(_stable_line(event))
        return hasher.hexdigest()

    def iter_jsonl(self) -> Iterator[bytes]:
        """The events as JSON lines, a chunk at a time (spilled chunks straight from the spill file)."""
        if self._file is not None:
            for index in range(len(self._offsets) - 1):
                self._file.seek(self._offsets[index])
                yield self._file.read(self._offsets[index + 1] - self._offsets[index])
        for start in range(0, len(self.tail), self.chunk):
            yield b"".join(_jsonl_line(e) for e in self.tail[start : start + self.chunk])

    def copy(self) -> EventLog:
        clone = EventLog(self.chunk)
        if not self.spilled:  # the common case (a fork of a fresh world): one list copy
            clone.tail = list(self.tail)
            return clone
        for event in self:
            clone.append(event)
        return clone

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Trajectory:
    def __init__(self, chunk: int = CHUNK_EVENTS) -> None:
        self.events = EventLog(chunk)
        self.subscribers: list[Callable[[Event], None]] = []

    def record(self, kind: str, virtual_time: str, **fields: Any) -> Event:
        event: Event = {"seq": len(self.events), "kind": kind, "virtual_time": virtual_time, **fields}
        event["real_time"] = time.time()
        self.events.append(event)
        for subscriber in self.subscribers:
            subscriber(event)
        return event

    def digest(self) -> str:
        return self.events.digest()

    def to_jsonl(self) -> bytes:
        return b"".join(self.events.iter_jsonl())

    def iter_jsonl(self) -> Iterator[bytes]:
        """The events as JSON lines, chunk by chunk (what a run streams to the object store)."""
        return self.events.iter_jsonl()

    def copy(self) -> Trajectory:
        clone = Trajectory(self.events.chunk)
        clone.events = self.events.copy()
        return clone
