"""Large runs: a 100,000-event trajectory in the real local object store opens at any page with ranged reads,
never a whole-object read, and the server answers its last page and a filtered page."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from agentenv import get_host
from agentenv.config import load_config
from agentenv_explorer.pages import STRIDE, TrajectoryPages
from agentenv_runtime import Records
from agentenv_testing.services import LoopbackService

if TYPE_CHECKING:
    from conftest import Project

EVENTS = 100_000


def event_lines(count: int) -> Iterator[bytes]:
    """Stored lines shaped as the runtime writes them: tool calls by two roles, a trigger every 1,000th event."""
    for seq in range(count):
        if seq % 1000 == 999:
            event = {"kind": "trigger", "trigger": "hourly", "trigger_kind": "time", "cause": None}
        else:
            role = "support" if seq % 2 else "billing_lead"
            event = {
                "kind": "tool_call",
                "role": role,
                "tool": "get_ticket",
                "args": {"ticket_id": f"TCK-{seq}"},
                "result": {"status": "open"},
                "error": None,
                "trigger": None,
            }
        stamp = f"2026-11-24T{10 + seq // 3_600_000:02d}:00:00+00:00"
        yield json.dumps({"real_time": time.time(), "seq": seq, "virtual_time": stamp, **event}).encode() + b"\n"


class ReadCounter:
    """The real object store, counting the bytes ranged reads return; a whole-object `get` fails the test."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.bytes = 0

    def get(self, key: str) -> bytes:
        raise AssertionError(f"read {key} whole")

    def get_stream(self, key: str, sink: Any, start: int = 0, end: int | None = None) -> int:
        count: int = self.store.get_stream(key, sink, start, end)
        self.bytes += count
        return count


def store_long_run(records: Any, run_id: str) -> str:
    key = f"runs/{run_id}/desk.trajectory.jsonl"
    records.put_object_chunks(key, (b"".join(chunk) for chunk in _batches(event_lines(EVENTS), 5000)))
    records.create(
        {
            "id": run_id,
            "task": "long-run",
            "status": "succeeded",
            "passed": True,
            "score": 1.0,
            "seed": 1,
            "started_at": time.time(),
            "finished_at": time.time() + 1,
            "trajectories": {"desk": key},
        }
    )
    return key


def _batches(lines: Iterator[bytes], size: int) -> Iterator[list[bytes]]:
    batch: list[bytes] = []
    for line in lines:
        batch.append(line)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


@pytest.fixture(scope="module")
def long_run(project: Project) -> tuple[Any, str, str]:
    config = load_config(environ={"AGENTENV_CONFIG": project.env["AGENTENV_CONFIG"]})
    records = Records(config, get_host())
    run_id = "r20260101-000000-long0run0000000"
    return records, run_id, store_long_run(records, run_id)


def test_any_page_is_one_ranged_read_of_a_few_strides(long_run: tuple[Any, str, str]) -> None:
    records, _, key = long_run
    counter = ReadCounter(records.objects)
    pages = TrajectoryPages(counter)  # type: ignore[arg-type]
    index = pages.index(key)
    assert index.count == EVENTS and len(index.offsets) == -(-EVENTS // STRIDE)
    scanned, counter.bytes = counter.bytes, 0
    events, total = pages.page(key, EVENTS - 150, 200)
    assert total == EVENTS and [e["seq"] for e in events] == list(range(EVENTS - 150, EVENTS))
    line = scanned / EVENTS
    assert counter.bytes < 2 * STRIDE * line * 1.5, (counter.bytes, scanned)  # not the 20 MB object
    counter.bytes = 0
    middle, _ = pages.page(key, 50_000, 3)
    assert [e["seq"] for e in middle] == [50_000, 50_001, 50_002] and counter.bytes < 2 * STRIDE * line * 1.5


def test_the_server_opens_the_last_page_and_filters_on_its_side(
    explorer: LoopbackService, long_run: tuple[Any, str, str]
) -> None:
    _, run_id, _ = long_run
    last = httpx.get(
        f"{explorer.url}/api/runs/{run_id}/trajectory", params={"offset": EVENTS - 200}, timeout=120
    ).json()
    assert last["total"] == EVENTS and last["events"][-1]["seq"] == EVENTS - 1 and last["next_offset"] is None
    triggers = httpx.get(
        f"{explorer.url}/api/runs/{run_id}/trajectory", params={"kind": "trigger", "limit": 500}, timeout=120
    ).json()
    assert [e["seq"] for e in triggers["events"]][:3] == [999, 1999, 2999] and len(triggers["events"]) == 100
    support = httpx.get(
        f"{explorer.url}/api/runs/{run_id}/trajectory",
        params={"role": "support", "offset": 10, "limit": 2},
        timeout=120,
    ).json()
    assert [e["seq"] for e in support["events"]] == [21, 23] and support["next_offset"] == 12
