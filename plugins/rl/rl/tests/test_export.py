"""`agentenv runs export`: chat-format rows from real runs of support-refund, as JSON lines and as Parquet."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentenv_rl.export import messages_of
from agentenv_testing.installs import CliResult

SOLVER_TOOLS = ["get_ticket", "get_order", "issue_refund", "close_ticket", "send_email"]


@pytest.fixture
def runs(agentenv_cli: Callable[..., CliResult]) -> dict[str, Any]:
    good = agentenv_cli("run", "support-refund", "-k", "2", "--json")
    bad = agentenv_cli("run", "support-refund", "--agent", "wrong_solver", "--json")
    assert good.returncode == 0 and bad.returncode == 1
    return {t["run_id"]: t for t in good.json()["tasks"] + bad.json()["tasks"]}


def rows_of(result: CliResult) -> list[dict[str, Any]]:
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_chat_jsonl_has_the_conversation_the_reward_and_the_metadata(
    agentenv_cli: Callable[..., CliResult], runs: dict[str, Any]
) -> None:
    rows = rows_of(agentenv_cli("runs", "export", "--format", "chat-jsonl"))
    assert {row["run_id"] for row in rows} == set(runs)
    for row in rows:
        ran = runs[row["run_id"]]
        assert row["reward"] == ran["score"] and row["trajectory_digest"] == ran["trajectory_digest"]
        messages = row["messages"]
        assert messages[0]["role"] == "user" and "TCK-9001" in messages[0]["content"]
        assert messages[-1]["role"] == "assistant" and messages[-1]["content"]
        calls = [m for m in messages if m.get("tool_calls")]
        results = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
        assert [c["tool_calls"][0]["id"] for c in calls] == list(results), "every call is answered, in order"
        for call in calls:
            json.loads(call["tool_calls"][0]["function"]["arguments"])
        assert row["metadata"]["verifiers"]["grade"]["score"] == ran["score"]
    good = next(r for r in rows if r["reward"] == 1.0)
    assert [c["tool_calls"][0]["function"]["name"] for c in good["messages"] if c.get("tool_calls")] == SOLVER_TOOLS
    assert any(r["reward"] < 1.0 for r in rows)


def test_runs_and_task_select_and_parquet_holds_the_same_rows(
    agentenv_cli: Callable[..., CliResult], runs: dict[str, Any], tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    first = sorted(runs)[0]
    picked = rows_of(agentenv_cli("runs", "export", "--runs", first[:-2]))
    assert [row["run_id"] for row in picked] == [first]
    assert rows_of(agentenv_cli("runs", "export", "--task", "no-such-task")) == []
    out = tmp_path / "runs.parquet"
    written = agentenv_cli("runs", "export", "--format", "parquet", "--output", str(out))
    assert written.returncode == 0 and "exported 3 runs" in written.stderr
    table = pq.read_table(out).to_pylist()
    lines = {row["run_id"]: row for row in rows_of(agentenv_cli("runs", "export"))}
    assert len(table) == 3
    for row in table:
        assert json.loads(row["messages"]) == lines[row["run_id"]]["messages"]
        assert row["reward"] == lines[row["run_id"]]["reward"]


def test_bad_requests_are_one_line_errors(agentenv_cli: Callable[..., CliResult]) -> None:
    missing = agentenv_cli("runs", "export", "--runs", "r-none")
    assert missing.returncode == 2 and "no run 'r-none'" in missing.stderr
    parquet = agentenv_cli("runs", "export", "--format", "parquet")
    assert parquet.returncode == 2 and "give --output" in parquet.stderr


def test_calls_by_triggers_and_other_roles_are_left_out_of_the_messages() -> None:
    events = [
        {"seq": 0, "kind": "tool_call", "role": "agent", "tool": "a", "args": {}, "result": 1},
        {"seq": 1, "kind": "tool_call", "role": "system", "tool": "b", "args": {}, "result": 2, "trigger": "t"},
        {"seq": 2, "kind": "trigger", "trigger": "t"},
        {"seq": 3, "kind": "tool_call", "role": "other", "tool": "c", "args": {}, "error": {"code": "x"}},
        {"seq": 4, "kind": "agent_turn", "role": "agent", "user": "hi", "agent": "done"},
    ]
    messages, left_out = messages_of(events)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["function"]["name"] == "a" and left_out == 3


def test_recorded_episodes_are_exported_like_runs(agentenv_cli: Callable[..., CliResult]) -> None:
    from agentenv_rl.api import make

    episode = make("support-refund", record=True)
    try:
        episode.reset()
        episode.step({"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}})
        final = episode.step({"answer": "Looked at it."})
    finally:
        episode.close()
    (row,) = rows_of(agentenv_cli("runs", "export"))
    assert row["run_id"] == final.info["run_id"] and row["reward"] == final.reward
    assert [m["role"] for m in row["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert row["trajectory_digest"] == final.info["trajectory_digest"]


def test_export_streams_one_run_at_a_time(tmp_path: Path) -> None:
    """300 runs with 100 KB trajectories each (30 MB): exporting them holds about one run in memory."""
    import io
    import tracemalloc

    from agentenv import get_host
    from agentenv.config import load_config
    from agentenv_rl.export import rows, write_jsonl
    from agentenv_runtime import Records

    records = Records(load_config(), get_host())
    padding = "x" * 100_000
    for index in range(300):
        run_id = f"r-stream-{index:04d}"
        events = [
            {"seq": 0, "kind": "tool_call", "role": "agent", "tool": "note", "args": {"text": padding}, "result": 1},
            {"seq": 1, "kind": "agent_turn", "role": "agent", "user": "go", "agent": "done"},
        ]
        key = f"runs/{run_id}/desk.trajectory.jsonl"
        records.objects.put(key, "".join(json.dumps(e) + "\n" for e in events).encode())
        records.save({"id": run_id, "task": "t", "seed": index, "score": 0.5, "trajectories": {"desk": key}})
    fetched: list[str] = []
    original = records.documents.get
    records.documents.get = lambda collection, doc_id: fetched.append(doc_id) or original(collection, doc_id)  # type: ignore[method-assign]
    stream = rows(records)
    assert next(stream)["run_id"] == "r-stream-0000" and fetched == ["r-stream-0000"]

    class Counting(io.TextIOBase):
        lines = 0

        def write(self, text: str) -> int:
            self.lines += 1
            return len(text)

    out = Counting()
    tracemalloc.start()
    try:
        assert write_jsonl(rows(records), out) == 300
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.lines == 300 and peak < 5_000_000, f"peak {peak / 1e6:.1f} MB for 30 MB of runs"


def test_what_the_export_leaves_out_is_said(agentenv_cli: Callable[..., CliResult], runs: dict[str, Any]) -> None:
    """A run that deployed no world (no trajectory) and a trajectory whose record is gone were left out without a
    word; the count and the run ids are on stderr, with how to export the first."""
    from agentenv import get_host
    from agentenv.config import load_config
    from agentenv_runtime import Records

    records = Records(load_config(), get_host())
    records.save({"id": "r-no-world", "task": "t", "seed": 0, "status": "failed", "trajectory_digest": None})
    records.objects.put("runs/r-orphan/desk.trajectory.jsonl", b'{"seq": 0, "kind": "trigger", "trigger": "x"}\n')
    result = agentenv_cli("runs", "export")
    assert {row["run_id"] for row in rows_of(result)} == set(runs)
    assert "exported 3 runs; left out 2:" in result.stderr, result.stderr
    assert "r-no-world: it deployed no world, so it has no trajectory (--runs r-no-world exports it" in result.stderr
    assert "r-orphan: its trajectory is stored but its run record is not" in result.stderr
    named = agentenv_cli("runs", "export", "--runs", "r-no-world")
    assert [row["run_id"] for row in rows_of(named)] == ["r-no-world"] and "left out" not in named.stderr
    assert "r-no-world has no trajectory: its row has no messages" in named.stderr
