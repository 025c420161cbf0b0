"""Stored runs as the API shows them: filtered pages of summaries, one record, its steps as a DAG, its
trajectory in pages, its artifacts and its verifier output. Everything reads through the runtime's `Records`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agentenv_explorer.errors import ApiError, bad_request, not_found
from agentenv_explorer.pages import TrajectoryPages
from agentenv_explorer.params import check_names, flag, paging, whole

RUN_FILTERS = {"task", "status", "bundle", "seed", "passed", "agent"}
STATUSES = {"running", "succeeded", "failed", "cancelled", "interrupted"}
EVENT_FILTERS = {"kind", "role", "tool", "q"}
LIST_FIELDS = ("id", "task", "bundle", "status", "passed", "score", "seed", "started_at", "finished_at")


TASK_DEFAULT = "task default"
"""How the list shows (and the `agent` filter names) a run that used its task's own agent."""


def agent_of(record: Mapping[str, Any]) -> str:
    """The agent a run used: the `--agent` override, else the task's own (shown as `task default`)."""
    overrides = record.get("overrides")
    chosen = record.get("agent") or (overrides.get("agent") if isinstance(overrides, dict) else None)
    return str(chosen) if chosen else TASK_DEFAULT


def summary(record: Mapping[str, Any]) -> dict[str, Any]:
    row = {key: record.get(key) for key in LIST_FIELDS}
    started, finished = record.get("started_at"), record.get("finished_at")
    numbers = isinstance(started, int | float) and isinstance(finished, int | float)
    row["duration_s"] = round(finished - started, 4) if numbers else None  # type: ignore[operator]
    row["agent"] = agent_of(record)
    return row


class RunsView:
    """Read-only questions about stored runs, answered from the configured document and object stores."""

    def __init__(self, records: Any, guard: Callable[..., Any]) -> None:
        self.records = records
        self.guard = guard
        """Runs a store call and turns a store failure into a 503 with the store's own message."""
        self.pages = TrajectoryPages(records.objects)

    # -- the list -----------------------------------------------------------------------------------------
    def list(self, query: Mapping[str, str]) -> dict[str, Any]:
        check_names(query, RUN_FILTERS | {"offset", "limit"})
        offset, limit = paging(query)
        where: dict[str, Any] = {k: query[k] for k in ("task", "bundle") if query.get(k)}
        if query.get("seed"):
            where["seed"] = whole(query, "seed", 0, low=-(2**63))
        passed = flag(query, "passed")
        if passed is not None:
            where["passed"] = passed
        status = query.get("status") or None
        if status is not None and status not in STATUSES:
            raise bad_request(f"status={status!r} is not a run status; give one of {', '.join(sorted(STATUSES))}")
        agent = query.get("agent") or None
        if agent is not None:  # the store filters on the record's top-level `agent` (null: the task's own)
            where["agent"] = None if agent == TASK_DEFAULT else agent
        # `interrupted` is worked out live from a `running` record.
        if status is not None:
            where["status"] = "running" if status == "interrupted" else status
        post: list[Callable[[dict[str, Any]], bool]] = []
        if status in ("running", "interrupted"):
            post.append(lambda r: r.get("status") == status)
        wanted = offset + limit + 1
        found = self.guard(self.records.list, None if post else wanted, **where)
        rows = [r for r in found if all(keep(r) for keep in post)][offset:wanted]
        more = len(rows) > limit
        return {
            "runs": [summary(r) for r in rows[:limit]],
            "offset": offset,
            "limit": limit,
            "next_offset": offset + limit if more else None,
        }

    # -- one run ------------------------------------------------------------------------------------------
    def get(self, run_id: str) -> dict[str, Any]:
        try:
            record: dict[str, Any] = self.guard(self.records.get, run_id)
        except LookupError as exc:
            raise not_found(str(exc), "list the stored runs at GET /api/runs") from None
        return record

    def record(self, run_id: str) -> dict[str, Any]:
        record = self.get(run_id)
        return {**record, "summary": summary(record)}

    def steps(self, run_id: str) -> dict[str, Any]:
        """Every step of the task with its state and time, and the edges of the DAG (from the task file)."""
        record = self.get(run_id)
        done = {s["id"]: s for s in record.get("steps") or [] if isinstance(s, dict) and "id" in s}
        deps, declared = _task_dag(record)
        order = declared or list(done)
        steps = []
        for step_id in order:
            step = done.get(step_id, {"id": step_id, "status": "pending"})
            steps.append(
                {
                    key: step.get(key)
                    for key in ("id", "type", "status", "attempts", "started", "duration_ms", "error", "output")
                }
                | {"type": step.get("type") or declared.get(step_id), "depends_on": deps.get(step_id, [])}
            )
        return {"run": record["id"], "status": record.get("status"), "steps": steps}

    def verifier(self, run_id: str) -> dict[str, Any]:
        record = self.get(run_id)
        return {
            "run": record["id"],
            "score": record.get("score"),
            "passed": record.get("passed"),
            "verifiers": record.get("verifiers") or {},
        }

    def artifacts(self, run_id: str) -> dict[str, Any]:
        """The objects stored under the run (trajectories, snapshots, files) and the artifacts it pinned."""
        record = self.get(run_id)
        keys = self.guard(self.records.objects.list, f"runs/{record['id']}/")
        pins = record.get("pins") if isinstance(record.get("pins"), dict) else {}
        return {"run": record["id"], "objects": keys, "artifact_pins": (pins or {}).get("artifacts", {})}

    def artifact(self, run_id: str, key: str) -> bytes:
        record = self.get(run_id)
        prefix = f"runs/{record['id']}/"
        full = key if key.startswith(prefix) else prefix + key
        try:
            data: bytes = self.guard(self.records.objects.get, full)
        except KeyError:
            raise not_found(f"run {record['id']} stored no object {key!r}", "see its artifacts list") from None
        return data

    # -- the trajectory -----------------------------------------------------------------------------------
    def trajectory_key(self, record: Mapping[str, Any], world: str | None) -> tuple[str, str]:
        stored = record.get("trajectories") or {}
        if not stored:
            raise ApiError(
                409,
                f"run {record['id']} has no stored trajectory yet (status {record.get('status')}); "
                "a running run's events come from GET /api/runs/{id}/events",
            )
        name = world or next(iter(stored))
        if name not in stored:
            raise not_found(f"run {record['id']} has no world {name!r}", f"worlds: {', '.join(stored)}")
        return name, str(stored[name])

    def trajectory(self, run_id: str, query: Mapping[str, str]) -> dict[str, Any]:
        check_names(query, EVENT_FILTERS | {"offset", "limit", "world"})
        offset, limit = paging(query, 200)
        record = self.get(run_id)
        world, key = self.trajectory_key(record, query.get("world") or None)
        keep = event_filter(query)
        page: dict[str, Any] = {"run": record["id"], "world": world, "offset": offset, "limit": limit}
        if keep is None:
            events, total = self.guard(self.pages.page, key, offset, limit)
            more = offset + len(events) < total
            page |= {"total": total}
        else:
            events, more = self.guard(self.pages.matching, key, keep, offset, limit)
        page |= {
            "worlds": list(record.get("trajectories") or {}),
            "events": events,
            "next_offset": offset + limit if more else None,
        }
        return page


def event_filter(query: Mapping[str, str]) -> Callable[[dict[str, Any]], bool] | None:
    """A test for events from `kind`, `role`, `tool` (exact) and `q` (text anywhere in the event); None: all."""
    wanted = {k: query[k] for k in ("kind", "role", "tool") if query.get(k)}
    text = (query.get("q") or "").lower()
    if not wanted and not text:
        return None

    def keep(event: dict[str, Any]) -> bool:
        if any(str(event.get(k)) != v for k, v in wanted.items()):
            return False
        return not text or text in repr(event).lower()

    return keep


def _task_dag(record: Mapping[str, Any]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(step → the steps it waits for, step → type in task order) from the run's task file, if still readable."""
    from agentenv_runtime import TaskError, read_task

    path = record.get("task_file")
    if not isinstance(path, str):
        return {}, {}
    try:
        task = read_task(Path(path))
    except (TaskError, OSError):
        return {}, {}
    return task.deps(), {s.id: s.type for s in task.steps}
