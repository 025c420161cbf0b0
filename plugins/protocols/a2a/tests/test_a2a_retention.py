"""Task retention of a served agent: a cap on kept tasks (oldest finished first) and a time to live for
finished ones; an evicted task answers task-not-found, on the wire (0.3 `tasks/get`, 1.0 `GetTask`)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a_testkit import EchoAgent, notes_world
from agentenv_a2a.server import build_a2a_app, serve_a2a


def send(url: str, text: str) -> str:
    """message/send (0.3, at /a2a); the id of the completed task."""
    message = {"role": "user", "parts": [{"kind": "text", "text": text}], "messageId": uuid.uuid4().hex,
               "kind": "message"}
    reply = httpx.post(f"{url}/a2a", json={"jsonrpc": "2.0", "id": 1, "method": "message/send",
                                           "params": {"message": message}}, timeout=30).json()
    assert reply["result"]["status"]["state"] == "completed", reply
    return str(reply["result"]["id"])


def tasks_get(url: str, task_id: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task_id}}
    reply: dict[str, Any] = httpx.post(f"{url}/a2a", json=body, timeout=30).json()
    return reply


def test_the_oldest_finished_tasks_are_evicted_past_max_tasks():
    _world, tools = notes_world()
    app = build_a2a_app(EchoAgent(), tools, name="Echo", description="d")
    with serve_a2a(app, max_tasks=3) as url:
        ids = [send(url, f"task {n}") for n in range(5)]
        for gone in ids[:2]:
            missing = tasks_get(url, gone)
            assert missing["error"]["code"] == -32001, missing  # TaskNotFoundError (0.3's code)
        for kept in ids[2:]:
            assert tasks_get(url, kept)["result"]["id"] == kept
        one = httpx.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": ids[0]}},
                         headers={"a2a-version": "1.0"}, timeout=30).json()
        assert "error" in one and "not found" in one["error"]["message"].lower(), one  # the 1.0 method too
        trajectory = httpx.post(f"{url}/agentenv", json={"jsonrpc": "2.0", "id": 4, "method": "trajectory/get"},
                                timeout=30).json()["result"]["tasks"]
        assert [t["task_id"] for t in trajectory] == ids[2:]  # the task records follow the same cap
    assert app.state.task_store.evicted == 2 and len(app.state.task_store) == 3


def test_finished_tasks_go_after_their_ttl_and_running_ones_stay():
    from a2a.server.context import ServerCallContext
    from a2a.types.a2a_pb2 import Task, TaskState, TaskStatus
    from agentenv_a2a.retention import BoundedTaskStore

    now = [0.0]
    store = BoundedTaskStore(max_tasks=2, task_ttl=60, clock=lambda: now[0])
    context = ServerCallContext()

    def task(task_id: str, state: int) -> Task:
        return Task(id=task_id, context_id="c", status=TaskStatus(state=state))  # type: ignore[arg-type]

    async def scenario() -> None:
        await store.save(task("running", TaskState.TASK_STATE_WORKING), context)
        await store.save(task("done", TaskState.TASK_STATE_COMPLETED), context)
        now[0] = 59.0
        assert await store.get("done", context) is not None
        now[0] = 61.0
        assert await store.get("done", context) is None  # past its time: gone, without another save
        await store.save(task("a", TaskState.TASK_STATE_WORKING), context)
        await store.save(task("b", TaskState.TASK_STATE_WORKING), context)
        assert len(store) == 3  # over the cap, but running tasks are never evicted
        await store.save(task("a", TaskState.TASK_STATE_FAILED), context)
        assert await store.get("a", context) is None and await store.get("running", context) is not None
        other = ServerCallContext(state={"x": 1})
        assert await store.get("b", other) is not None  # same (unauthenticated) owner

    asyncio.run(scenario())


@pytest.mark.parametrize(("kwargs", "named"), [({"max_tasks": 0}, "max_tasks"), ({"task_ttl": 0}, "task_ttl")])
def test_limits_that_cannot_work_are_refused(kwargs: dict[str, Any], named: str):
    _world, tools = notes_world()
    with pytest.raises(ValueError, match=named):
        build_a2a_app(EchoAgent(), tools, name="Echo", description="d", **kwargs)
    app = build_a2a_app(EchoAgent(), tools, name="Echo", description="d")
    with pytest.raises(ValueError, match=named), serve_a2a(app, **kwargs):
        pass


def test_the_cli_refuses_a_bad_max_tasks(tmp_path: Path):
    agentenv = Path(sys.executable).with_name("agentenv")
    proc = subprocess.run(
        [str(agentenv), "a2a-serve", "--env", "notes", "--agent-kind", "echo-test", "--max-tasks", "0"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )
    assert proc.returncode != 0
    assert "--max-tasks" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
