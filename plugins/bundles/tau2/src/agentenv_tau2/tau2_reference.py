"""Run under τ²-bench's own Python (its venv, see .ci/setup.d/40-tau2-bench.sh): τ²'s grade of trajectories.

Reads `{"mode": "grade" | "bench", "cases": [{"task": ID, "calls": [[tool, arguments], ...]}], "repeat": N}` as
JSON on stdin and writes JSON on stdout:
- grade: per case, τ²'s `EnvironmentEvaluator` verdict (`db_match`) and the hash τ² computes of the database the
  trajectory leaves (`predicted_hash`, `Environment.get_db_hash`), so a caller can compare both with its own.
- bench: seconds per episode of τ²'s reset (a fresh environment on the initial database) and of its grade
  (gold replay and comparison), each case run `repeat` times.

`TAU2_DATA_DIR` must name a folder holding `tau2/domains/retail/` (db.json, tasks.json, policy.md,
split_tasks.json). This file only drives τ²'s public functions; it grades nothing itself.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def messages_of(calls: list[list[Any]]) -> list[Any]:
    """The agent's tool calls as τ² messages: each call its own assistant message, then its tool message."""
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage

    out: list[Any] = []
    for index, (name, arguments) in enumerate(calls):
        call_id = f"call_{index}"
        out.append(
            AssistantMessage(
                role="assistant", content=None, tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)]
            )
        )
        out.append(ToolMessage(id=call_id, role="tool", content=""))
    return out


def main() -> None:
    from loguru import logger

    logger.remove()  # τ² logs every replayed call; the caller reads only our JSON
    from tau2.domains.retail.environment import get_environment, get_tasks
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator

    request = json.load(sys.stdin)
    tasks = {task.id: task for task in get_tasks(None)}
    results = []
    for case in request["cases"]:
        task, trajectory = tasks[case["task"]], messages_of(case["calls"])
        if request.get("mode") == "bench":
            reset = grade = 0.0
            for _ in range(int(request.get("repeat", 1))):
                started = time.perf_counter()
                get_environment()
                reset += time.perf_counter() - started
                started = time.perf_counter()
                EnvironmentEvaluator.calculate_reward(
                    environment_constructor=get_environment,
                    task=task,
                    full_trajectory=trajectory,
                    strict_replay=False,
                )
                grade += time.perf_counter() - started
            results.append({"reset_s": reset, "grade_s": grade, "repeat": int(request.get("repeat", 1))})
            continue
        info = EnvironmentEvaluator.calculate_reward(
            environment_constructor=get_environment, task=task, full_trajectory=trajectory, strict_replay=False
        )
        predicted = get_environment()
        predicted.set_state(
            initialization_data=None, initialization_actions=None, message_history=trajectory, strict=False
        )
        results.append({"db_match": bool(info.db_check.db_match), "predicted_hash": predicted.get_db_hash()})
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
