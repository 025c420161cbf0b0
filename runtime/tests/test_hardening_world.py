"""Regression tests of issue 16 for the world and `agentenv run`: each failed before its fix."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime import Env, ToolError, tool
from agentenv_runtime.cli import run_cmd
from agentenv_runtime.world.arguments import ArgumentLimits, argument_problem
from agentenv_runtime.world.world import World
from agentenv_testing.tasks import temporary_config


class Shelf(Env):
    name = "shelf"
    schema = "CREATE TABLE books (title TEXT);"

    @tool(read_only=True)
    def broken_search(self, query: str) -> list[dict[str, Any]]:
        """A read-only tool whose backend rejects the query with a non-ToolError exception."""
        return self.query(f"SELECT * FROM books WHERE {query}")  # like a search-syntax error

    @tool
    def add_book(self, title: str) -> dict[str, Any]:
        """Add a book."""
        if not title:
            raise ToolError("title: empty", field="title")
        self.db.execute("INSERT INTO books VALUES (?)", (title,))
        return {"title": title}


def test_read_only_tool_exception_is_a_failed_call_and_recorded() -> None:
    world = World([Shelf()])
    outcome = world.call("broken_search", {"query": "x"})
    assert outcome.error is not None and outcome.error["code"] == "tool_failed"
    assert "OperationalError" in outcome.error["message"]
    assert world.trajectory.events[-1]["error"] == outcome.error


def test_env_that_raises_out_of_call_does_not_escape_the_world() -> None:
    class Leaky(Shelf):
        name = "leaky"

        def call(self, tool_name: str, arguments: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
            raise sqlite3.DatabaseError("database disk image is malformed")

    world = World([Leaky()])
    outcome = world.call("add_book", {"title": "x"})
    assert outcome.error is not None and outcome.error["code"] == "tool_failed"
    assert len(world.trajectory.events) == 1


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"title": "\ud800"}, "title"),
        ({"title": "a\x00b"}, "title"),
        ({"title": "ok", "extra": {"deep": ["\udfff"]}}, "extra.deep.0"),
    ],
)
def test_unencodable_text_is_refused_before_the_tool_and_the_trajectory_stays_readable(
    arguments: dict[str, Any], field: str
) -> None:
    world = World([Shelf()], roles={"reader": {"tools": ["broken_search"]}})
    before = world.snapshot()
    outcome = world.call("add_book", arguments)
    assert outcome.error is not None and outcome.error["code"] == "invalid_arguments"
    assert outcome.error["field"] == field
    assert world.snapshot() == before
    refused = world.call("add_book", arguments, role="reader")  # the lowest role, a refused call
    assert refused.error is not None
    for event in world.trajectory.events:
        json.dumps(event, ensure_ascii=False).encode("utf-8")  # raised UnicodeEncodeError before the fix
    world.trajectory.to_jsonl().decode("utf-8")
    world.trajectory.digest()


def test_surrogate_in_the_tool_name_is_not_echoed() -> None:
    world = World([Shelf()])
    outcome = world.call("add\ud800", {})
    assert outcome.error is not None and outcome.error["code"] == "unknown_tool"
    outcome.error["message"].encode("utf-8")


def test_deep_and_long_arguments_are_bounded_without_recursion() -> None:
    deep: Any = "leaf"
    for _ in range(100_000):
        deep = [deep]
    problem = argument_problem({"title": deep})
    assert problem is not None and "nested deeper than 64" in problem["message"]
    world = World([Shelf()])
    world.argument_limits = ArgumentLimits(max_depth=4, max_string=10)
    outcome = world.call("add_book", {"title": "x" * 11})
    assert outcome.error is not None and outcome.error["field"] == "title"
    assert "longer than 10" in outcome.error["message"]
    assert world.call("add_book", {"title": deep}).error is not None
    assert world.query("shelf", "SELECT count(*) AS n FROM books") == [{"n": 0}]


def test_slack_search_with_nul_is_a_clear_refusal() -> None:
    from agentenv_slack.env import SlackEnv

    world = World([SlackEnv()])
    outcome = world.call("search_messages", {"query": "a\x00b"})
    assert outcome.error is not None and outcome.error["code"] == "invalid_arguments"


def test_workers_are_capped_at_rollouts_and_cpus(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[int] = []

    def fake_parallel(task: Any, seeds: list[int], workers: int, **_: Any) -> list[dict[str, Any]]:
        asked.append(workers)
        return [
            {
                "name": task.name,
                "status": "succeeded",
                "passed": True,
                "score": 1.0,
                "trajectory_digest": None,
                "run_id": f"r{seed}",
                "seed": seed,
            }
            for seed in seeds
        ]

    monkeypatch.setattr(run_cmd, "run_parallel", fake_parallel)
    monkeypatch.setattr(run_cmd, "load_config", lambda: temporary_config(tmp_path))
    assert run_cmd.run("hello", k=2, workers=200) == 0
    assert asked == [min(2, os.cpu_count() or 1)] or asked == []  # one CPU: no pool at all
    assert "--workers 200: using" in capsys.readouterr().err
    assert run_cmd.worker_count(200, 10**6) == (os.cpu_count() or 1)


def test_the_clock_stops_at_the_end_of_representable_time() -> None:
    world = World([Shelf()])
    world.set_clock("9999-12-31T23:59:59Z", mode="scaled", rate=1_000_000)
    world.clock._real_base -= 10  # ten real seconds later: ten million virtual seconds past year 9999
    assert world.call("add_book", {"title": "x"}).ok  # every call failed with OverflowError before
    assert world.clock.now().year == 9999
    world.set_clock("9999-12-31T23:59:59Z", mode="frozen", timezone="Pacific/Kiritimati")
    with pytest.raises(ValueError, match=r"past the calendar \(years 1 to 9999\); at most 1 seconds forward fit"):
        world.advance(1e300)  # clamped without a word before
    assert world.call("get_time").ok
    world.set_clock("9000-01-01T00:00:00Z", mode="frozen")
    with pytest.raises(ValueError, match="at most 31,"):
        world.advance(10_000 * 365 * 86400)
    assert world.clock.now().year == 9000  # nothing moved
    with pytest.raises(ValueError, match="not a finite number"):
        world.advance(float("inf"))
