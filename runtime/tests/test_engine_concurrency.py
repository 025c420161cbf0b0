"""The DAG engine runs independent steps at the same time, and a step without `depends_on` waits for all before it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine_helpers import brief, engine_host, make_step, run_task, runner_for, statuses, steps_by_id, task_file
from pydantic import BaseModel

TIMEOUT = 5.0


class Handshake(BaseModel):
    me: str
    other: str


def test_independent_steps_really_overlap(tmp_path: Path) -> None:
    """Each of `a` and `b` waits for the other to have started: run one after the other, both would time out."""
    arrived: dict[str, asyncio.Event] = {}
    seen_ids: dict[str, str] = {}
    finished: list[str] = []
    join_saw: list[list[str]] = []
    events: list[tuple[str, str]] = []

    async def handshake(settings: Handshake, ctx: Any) -> dict[str, Any]:
        arrived.setdefault(settings.me, asyncio.Event()).set()
        other = arrived.setdefault(settings.other, asyncio.Event())
        await asyncio.wait_for(other.wait(), TIMEOUT)
        seen_ids[settings.me] = ctx.step_id  # after the other step ran: each still sees its own id
        finished.append(settings.me)
        return {"met": settings.other}

    async def join(settings: Any, ctx: Any) -> dict[str, Any]:
        join_saw.append(sorted(finished))
        return {}

    host = engine_host(make_step("handshake", handshake, settings=Handshake), make_step("join", join))
    task = task_file(
        tmp_path,
        [
            {"id": "a", "type": "handshake", "depends_on": [], "me": "a", "other": "b"},
            {"id": "b", "type": "handshake", "depends_on": [], "me": "b", "other": "a"},
            {"id": "join", "type": "join"},
        ],
    )
    record = run_task(runner_for(host, tmp_path), task, on_step=lambda event, step: events.append((event, step.id)))

    assert statuses(record) == {"a": "succeeded", "b": "succeeded", "join": "succeeded"}, brief(record)
    assert record["status"] == "succeeded" and record["passed"] is True
    assert seen_ids == {"a": "a", "b": "b"}
    assert steps_by_id(record)["a"]["output"] == {"met": "b"}
    assert join_saw == [["a", "b"]]  # absent depends_on = after every earlier step
    started = [step for event, step in events if event == "started"]
    assert set(started[:2]) == {"a", "b"} and started[2] == "join"
    first_finish = next(i for i, (event, _) in enumerate(events) if event == "succeeded")
    assert events.index(("started", "b")) < first_finish and events.index(("started", "a")) < first_finish
    assert events.index(("started", "join")) > max(events.index(("succeeded", "a")), events.index(("succeeded", "b")))


def test_absent_depends_on_means_after_every_earlier_step(tmp_path: Path) -> None:
    log: list[tuple[str, str]] = []

    class Pause(BaseModel):
        seconds: float = 0.0

    async def tick(settings: Pause, ctx: Any) -> dict[str, Any]:
        log.append(("start", ctx.step_id))
        await asyncio.sleep(settings.seconds)
        log.append(("end", ctx.step_id))
        return {}

    host = engine_host(make_step("tick", tick, settings=Pause))
    # `slow` and `fast` are independent; `last` names no dependencies, so it waits for both, not just `fast`.
    task = task_file(
        tmp_path,
        [
            {"id": "slow", "type": "tick", "depends_on": [], "seconds": 0.05},
            {"id": "fast", "type": "tick", "depends_on": []},
            {"id": "last", "type": "tick"},
            {"id": "after", "type": "tick", "seconds": 0.01},
            {"id": "end", "type": "tick"},
        ],
    )
    assert task.deps() == {
        "slow": [],
        "fast": [],
        "last": ["slow", "fast"],
        "after": ["slow", "fast", "last"],
        "end": ["slow", "fast", "last", "after"],
    }
    record = run_task(runner_for(host, tmp_path), task)

    assert record["status"] == "succeeded", brief(record)
    assert log.index(("start", "last")) > log.index(("end", "slow"))
    assert log.index(("start", "last")) > log.index(("end", "fast"))
    assert log[-6:] == [
        ("start", "last"),
        ("end", "last"),
        ("start", "after"),
        ("end", "after"),
        ("start", "end"),
        ("end", "end"),
    ]
    assert log.index(("start", "fast")) < log.index(("end", "slow"))  # the independent pair did overlap
    for step in record["steps"]:
        assert step["attempts"] == 1 and step["started"] is not None and step["duration_ms"] >= 0
