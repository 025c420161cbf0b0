"""Stored runs as training data: one row per run with the conversation in OpenAI's chat format and the reward.

A run's trajectory becomes messages turn by turn: the user's message (the prompt `prompt_agent` gave), one
assistant message per tool call the agent made (`tool_calls` with JSON arguments) each followed by its `tool`
message (the result, or the structured error), then the agent's reply. Calls made by triggers and other world
events are not the agent's actions; they are counted in the metadata, not turned into messages.

Rows are produced one run at a time (`rows()` is a generator): the run ids come from the object store's listing
of trajectories, and each run's record and trajectory are read only when its row is written, so memory stays
the same for 100 or 100,000 runs (beyond the list of ids). Parquet is written in row groups of `BATCH` rows.
What is left out, and why, is collected in a `Report` for the command to say: a finished run that deployed no
world (it has no trajectory; the store finds those by their `trajectory_digest` of null) and a trajectory whose
run record is gone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agentenv_runtime import RUNS, Records

BATCH = 1000
TRAJECTORY_SUFFIX = ".trajectory.jsonl"
COLUMNS = ("run_id", "task", "seed", "reward", "passed", "status", "trajectory_digest", "messages", "metadata")


def messages_of(events: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """(chat messages, how many world events were left out) of one world's trajectory."""
    messages: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    left_out = 0
    for event in events:
        kind = event.get("kind")
        if kind == "tool_call" and not event.get("trigger"):
            pending.append(event)
        elif kind == "agent_turn":
            role = event.get("role")
            messages.append({"role": "user", "content": str(event.get("user") or "")})
            for call in pending:
                if call.get("role") != role:
                    left_out += 1
                    continue
                call_id = f"call_{call['seq']}"
                function = {"name": call["tool"], "arguments": json.dumps(call.get("args") or {}, sort_keys=True)}
                messages.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
                    }
                )
                outcome = {"error": call["error"]} if call.get("error") else call.get("result")
                content = json.dumps(outcome, sort_keys=True, default=str)
                messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
            pending = []
            messages.append({"role": "assistant", "content": str(event.get("agent") or "")})
        else:
            left_out += 1
    return messages, left_out + len(pending)


def run_ids(records: Records, wanted: list[str] | None = None) -> Iterator[str]:
    """The runs to export: the ones named (full ids or unique prefixes), else every run with a trajectory."""
    if wanted:
        for run_id in wanted:
            yield str(records.get(run_id)["id"])
        return
    seen: set[str] = set()
    for key in sorted(records.objects.list(f"{RUNS}/")):
        parts = key.split("/")
        if len(parts) == 3 and parts[2].endswith(TRAJECTORY_SUFFIX) and parts[1] not in seen:
            seen.add(parts[1])
            yield parts[1]


def row_of(records: Records, run_id: str) -> dict[str, Any] | None:
    """One run as a row; None for a run without a stored record."""
    record = records.documents.get(RUNS, run_id)
    if record is None:
        return None
    messages: list[dict[str, Any]] = []
    left_out = 0
    for key in (record.get("trajectories") or {}).values():
        events = (json.loads(line) for line in records.objects.get(key).decode().splitlines() if line.strip())
        world_messages, skipped = messages_of(events)
        messages.extend(world_messages)
        left_out += skipped
    metadata = {
        "bundle": record.get("bundle"),
        "task_file": record.get("task_file"),
        "verifiers": record.get("verifiers") or {},
        "plugin_versions": record.get("plugin_versions") or {},
        "world_events_left_out": left_out,
        "started_at": record.get("started_at"),
    }
    return {
        "run_id": record["id"],
        "task": record["task"],
        "seed": record.get("seed"),
        "reward": record.get("score"),
        "passed": record.get("passed"),
        "status": record.get("status"),
        "trajectory_digest": record.get("trajectory_digest"),
        "messages": messages,
        "metadata": metadata,
    }


NO_WORLD = "it deployed no world, so it has no trajectory (--runs {run} exports it with no messages)"
NO_RECORD = "its trajectory is stored but its run record is not (deleted, or written by a run that was killed)"


@dataclass
class Report:
    """What an export left out (reason → run ids) and notes on rows it wrote, for the command to print."""

    left_out: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def lines(self, most: int = 5) -> list[str]:
        """One line per reason: at most `most` run ids each, then how many more."""
        out = []
        for reason, runs in self.left_out.items():
            shown = ", ".join(runs[:most]) + (f" and {len(runs) - most} more" if len(runs) > most else "")
            out.append(f"  {shown}: {reason.format(run=runs[0])}")
        return out + [f"  {note}" for note in self.notes]


def rows(
    records: Records, wanted: list[str] | None = None, task: str | None = None, report: Report | None = None
) -> Iterator[dict[str, Any]]:
    report = report if report is not None else Report()
    for run_id in run_ids(records, wanted):
        row = row_of(records, run_id)
        if row is None:
            report.left_out.setdefault(NO_RECORD, []).append(run_id)
        elif task is None or row["task"] == task:
            if wanted and not row["messages"] and row["trajectory_digest"] is None:
                report.notes.append(f"{run_id} has no trajectory: its row has no messages")
            yield row
    if not wanted:  # finished runs without a world are not in the listing of trajectories
        where = {"trajectory_digest": None, **({"task": task} if task else {})}
        for record in records.documents.query(RUNS, where):
            report.left_out.setdefault(NO_WORLD, []).append(str(record.get("id")))


def write_jsonl(found: Iterable[dict[str, Any]], out: IO[str]) -> int:
    count = 0
    for row in found:
        out.write(json.dumps(row, sort_keys=True, default=str) + "\n")
        count += 1
    return count


def write_parquet(found: Iterable[dict[str, Any]], path: Path) -> int:
    """Parquet with `messages` and `metadata` as JSON text columns (one schema whatever the tools return)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            ("run_id", pa.string()),
            ("task", pa.string()),
            ("seed", pa.int64()),
            ("reward", pa.float64()),
            ("passed", pa.bool_()),
            ("status", pa.string()),
            ("trajectory_digest", pa.string()),
            ("messages", pa.string()),
            ("metadata", pa.string()),
        ]
    )
    count = 0
    with pq.ParquetWriter(str(path), schema) as writer:
        batch: list[dict[str, Any]] = []
        for row in found:
            batch.append(
                row | {"messages": json.dumps(row["messages"], default=str), "metadata": json.dumps(row["metadata"])}
            )
            if len(batch) >= BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                count, batch = count + len(batch), []
        if batch or count == 0:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            count += len(batch)
    return count
