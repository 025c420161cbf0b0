"""agent_prompt_response_verifier inside real tasks."""

from __future__ import annotations

from typing import Any

import pytest
from agentenv_runtime import TaskError

RESPONSE = "I refunded $89.99 for the Trailblazer boots on ORD-5001. Sorry about the split sole!"


def respond(text: str | None = RESPONSE) -> dict[str, Any]:
    return {"id": "ask", "type": "test_response", "response": text}


def grade(*checks: dict[str, Any]) -> dict[str, Any]:
    return {"id": "grade", "type": "agent_prompt_response_verifier", "prompt_step": "ask", "checks": list(checks)}


def test_all_checks_pass(run: Any) -> None:
    record = run(
        [
            respond(),
            grade(
                {"contains": "89.99"},
                {"contains": "trailblazer"},
                {"not_contains": "129.99"},
                {"regex": r"ORD-\d{4}", "name": "cites order"},
            ),
        ]
    )
    out = record["by_id"]["grade"]["output"]
    assert record["status"] == "succeeded" and out["score"] == 1.0 and out["passed"] is True
    assert [r["criterion"] for r in out["rows"]] == [
        "contains '89.99'",
        "contains 'trailblazer'",
        "not_contains '129.99'",
        "cites order",
    ]
    assert record["score"] == 1.0 and record["passed"]


def test_failures_are_weighted(run: Any) -> None:
    record = run(
        [
            respond(),
            grade(
                {"contains": "129.99", "weight": 3},
                {"contains": "boots"},
                {"contains": "Trailblazer", "case_sensitive": True, "name": "exact case"},
                {"contains": "TRAILBLAZER", "case_sensitive": True, "name": "wrong case"},
            ),
        ]
    )
    out = record["by_id"]["grade"]["output"]
    assert [r["passed"] for r in out["rows"]] == [False, True, True, False]
    assert out["score"] == pytest.approx(2 / 6)
    assert out["passed"] is False and record["passed"] is False
    assert "failed: contains '129.99'" in out["rows"][0]["detail"]


def test_equals_trims_and_ignores_case(run: Any) -> None:
    record = run([respond("  Done.\n"), grade({"equals": "done."}, {"equals": "done", "name": "not exact"})])
    assert [r["passed"] for r in record["by_id"]["grade"]["output"]["rows"]] == [True, False]


def test_no_response_is_empty_text(run: Any) -> None:
    out = run([respond(None), grade({"contains": "refund"})])["by_id"]["grade"]["output"]
    assert out["score"] == 0.0 and out["passed"] is False


def test_step_without_response_fails(run: Any) -> None:
    record = run([{"id": "ask", "type": "test_world", "key": "ask", "envs": ["helpdesk"]}, grade({"contains": "x"})])
    step = record["by_id"]["grade"]
    assert step["status"] == "failed" and "recorded no `response`" in step["error"]


def test_failed_prompt_step_does_not_pass(run: Any) -> None:
    record = run([{"id": "ask", "type": "test_fail", "fail_task_on_error": False}, grade({"not_contains": "x"})])
    step = record["by_id"]["grade"]
    assert step["status"] == "failed" and "has not produced output" in step["error"]
    assert record["passed"] is False


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"prompt_step": "nope", "checks": [{"contains": "x"}]}, "prompt_step", "no step 'nope'"),
        ({"prompt_step": "ask", "checks": []}, "checks", "empty"),
        ({"prompt_step": "ask", "checks": [{"contains": "x", "regex": "y"}]}, "checks.0", "exactly one of"),
        ({"prompt_step": "ask", "checks": [{"name": "n"}]}, "checks.0", "exactly one of"),
        ({"prompt_step": "ask", "checks": [{"regex": "("}]}, "checks.0", "not a valid regular expression"),
        ({"prompt_step": "ask", "checks": [{"contain": "x"}]}, "checks.0.contain", "Extra inputs"),
        ({"prompt_step": "ask", "checks": [{"contains": "x"}, {"contains": "x"}]}, "checks", "repeat"),
        ({"checks": [{"contains": "x"}]}, "prompt_step", "Field required"),
    ],
)
def test_preflight(run: Any, fields: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(TaskError) as err:
        run([respond(), {"id": "grade", "type": "agent_prompt_response_verifier", **fields}])
    text = str(err.value)
    assert "step 'grade' (agent_prompt_response_verifier)" in text and f"field `{field}`" in text and message in text
