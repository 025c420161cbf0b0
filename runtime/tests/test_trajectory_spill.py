"""The trajectory spills old chunks to disk: memory stays flat, reads and the digest are unchanged."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from typing import Any

from agentenv_runtime.world.trajectory import Trajectory


def reference_digest(events: list[dict[str, Any]]) -> str:
    """The digest as it was computed when every event stayed in memory."""
    hasher = hashlib.sha256()
    for event in events:
        stable = {k: v for k, v in event.items() if k != "real_time"}
        hasher.update(json.dumps(stable, sort_keys=True, separators=(",", ":"), default=str).encode())
        hasher.update(b"\n")
    return hasher.hexdigest()


def fill(trajectory: Trajectory, n: int) -> list[dict[str, Any]]:
    kept = []
    for i in range(n):
        event = trajectory.record("tool_call", f"2026-01-01T00:00:{i % 60:02d}", tool="t", args={"i": i, "s": "é" * 3})
        kept.append(json.loads(json.dumps(event)))
    return kept


def test_spilled_events_read_back_and_digest_is_unchanged() -> None:
    trajectory = Trajectory(chunk=8)
    kept = fill(trajectory, 101)
    events = trajectory.events
    assert events.spilled > 0 and len(events.tail) < 16
    assert len(events) == 101
    assert list(events) == kept
    assert events[0] == kept[0] and events[-1] == kept[-1] and events[37] == kept[37]
    assert events[5:40] == kept[5:40] and events[90:] == kept[90:]
    assert trajectory.digest() == reference_digest(kept)
    stored = trajectory.to_jsonl()
    assert stored.endswith(b"\n") and [json.loads(line) for line in stored.splitlines()] == kept
    clone = trajectory.copy()
    assert clone.digest() == trajectory.digest() and list(clone.events) == kept


def test_a_stored_line_is_the_digested_line_with_real_time_added() -> None:
    trajectory = Trajectory(chunk=2)
    kept = fill(trajectory, 9)
    for line, event in zip(trajectory.to_jsonl().splitlines(), kept, strict=True):
        assert json.loads(line) == event
        assert reference_digest([json.loads(line)]) == reference_digest([event])
    bare = Trajectory()
    bare.events.append({})
    bare.events.append({"real_time": 1.5})
    bare.events.append({"seq": 1})
    expected = [{}, {"real_time": 1.5}, {"seq": 1}]
    assert [json.loads(line) for line in bare.to_jsonl().splitlines()] == expected


def test_memory_stays_flat_over_many_events() -> None:
    trajectory = Trajectory(chunk=256)
    fill(trajectory, 2_000)  # warm-up: the spill file exists
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    for i in range(50_000):
        trajectory.record("tool_call", "t", tool="t", args={"i": i, "text": "x" * 200})
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(trajectory.events) == 52_000
    per_event = 600  # a kept event costs well over 600 bytes; 50,000 kept ones would be > 30 MB
    assert after - before < 50_000 * per_event // 20, f"grew {after - before} bytes over 50,000 events"
