"""Trajectory pages: any slice of a stored trajectory without reading the whole object into memory.

A stored trajectory is JSON lines in the object store (100,000 events are tens of megabytes). The first page
asked of it scans the object once through ranged reads and keeps the byte offset of every `STRIDE`-th line;
every page after that is one ranged read of a few strides. Filtered pages stream the object chunk by chunk
and keep only the matches they return, so the server's memory stays flat however large the run.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from agentenv.contracts import ObjectStore

STRIDE = 256
"""Lines between two remembered offsets: a page read reads at most one stride it does not return."""
CHUNK = 1 << 20
"""Bytes per ranged read while scanning."""
KEPT_INDEXES = 64
"""Indexes kept (least recently used dropped): a few KB each, even for 100,000 events."""


@dataclass(frozen=True)
class LineIndex:
    offsets: list[int]
    """Byte offset of line 0, STRIDE, 2*STRIDE, …"""
    count: int
    size: int


class _Collect:
    """A write-only sink for `ObjectStore.get_stream` that keeps what it is given."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)


def _read(store: ObjectStore, key: str, start: int, end: int) -> bytes:
    sink = _Collect()
    store.get_stream(key, sink, start, end)  # type: ignore[arg-type]  # a duck-typed binary sink
    return b"".join(sink.parts)


def _lines(store: ObjectStore, key: str) -> Iterator[tuple[int, bytes]]:
    """(byte offset, line without its newline) for every non-empty line, read CHUNK bytes at a time."""
    position, left = 0, b""
    while True:
        chunk = _read(store, key, position, position + CHUNK)
        if not chunk:
            break
        data = left + chunk
        base = position - len(left)
        position += len(chunk)
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if end > start:
                yield base + start, data[start:end]
            start = end + 1
        left = data[start:]
    if left.strip():
        yield position - len(left), left


class TrajectoryPages:
    """Pages of stored trajectories, with a small cache of line indexes (objects are immutable once stored)."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self._indexes: OrderedDict[str, LineIndex] = OrderedDict()

    def index(self, key: str) -> LineIndex:
        found = self._indexes.get(key)
        if found is not None:
            self._indexes.move_to_end(key)
            return found
        offsets: list[int] = []
        count, size = 0, 0
        for offset, line in _lines(self.store, key):
            if count % STRIDE == 0:
                offsets.append(offset)
            count += 1
            size = offset + len(line) + 1
        made = LineIndex(offsets, count, size)
        self._indexes[key] = made
        if len(self._indexes) > KEPT_INDEXES:
            self._indexes.popitem(last=False)
        return made

    def page(self, key: str, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """Events [offset, offset + limit) of the object and the total count; one ranged read."""
        index = self.index(key)
        if offset >= index.count or limit <= 0:
            return [], index.count
        first, last = offset // STRIDE, (offset + limit - 1) // STRIDE + 1
        start = index.offsets[first]
        end = index.offsets[last] if last < len(index.offsets) else index.size + 1
        lines = [line for line in _read(self.store, key, start, end).split(b"\n") if line.strip()]
        skip = offset - first * STRIDE
        return [json.loads(line) for line in lines[skip : skip + limit]], index.count

    def matching(
        self, key: str, keep: Callable[[dict[str, Any]], bool], offset: int, limit: int
    ) -> tuple[list[dict[str, Any]], bool]:
        """Matching events [offset, offset + limit) in order, and whether more match; streams the object."""
        found: list[dict[str, Any]] = []
        seen = 0
        for _, line in _lines(self.store, key):
            event = json.loads(line)
            if not keep(event):
                continue
            if seen >= offset:
                if len(found) == limit:
                    return found, True
                found.append(event)
            seen += 1
        return found, False

    def events(self, key: str) -> Iterator[dict[str, Any]]:
        """Every event of the object, streamed (for comparing two runs)."""
        for _, line in _lines(self.store, key):
            yield json.loads(line)
