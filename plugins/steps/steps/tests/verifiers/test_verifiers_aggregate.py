"""aggregate_verifiers inside real tasks: the three methods, weights, missing verifiers, preflight."""

from __future__ import annotations

from typing import Any

import pytest
from agentenv_runtime import TaskError

RESPONSE = "Refunded 89.99 for the boots."


def steps(
    method: str | None = None,
    weights: dict[str, float] | None = None,
    verifiers: tuple[str, ...] = ("good", "half", "bad"),
) -> list[dict[str, Any]]:
    def grade(step_id: str, *checks: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": step_id,
            "type": "agent_prompt_response_verifier",
            "prompt_step": "ask",
            "checks": list(checks),
            "depends_on": ["ask"],
        }

    aggregate: dict[str, Any] = {"id": "total", "type": "aggregate_verifiers", "verifiers": list(verifiers)}
    if method:
        aggregate["method"] = method
    if weights:
        aggregate["weights"] = weights
    return [
        {"id": "ask", "type": "test_response", "response": RESPONSE},
        grade("good", {"contains": "89.99"}),
        grade("half", {"contains": "boots"}, {"contains": "socks"}),
        grade("bad", {"contains": "129.99", "name": "full refund"}),
        aggregate,
    ]


def test_weighted_average_default(run: Any) -> None:
    record = run(steps())
    out = record["by_id"]["total"]["output"]
    assert out["method"] == "weighted_average"
    assert out["score"] == pytest.approx((1 + 0.5 + 0) / 3) and out["passed"] is False
    assert [r["criterion"] for r in out["rows"]] == [
        "good/contains '89.99'",
        "half/contains 'boots'",
        "half/contains 'socks'",
        "bad/full refund",
    ]
    assert out["verifiers"]["half"] == {"score": 0.5, "passed": False, "weight": 1.0}
    assert record["score"] == out["score"]  # the last verifier gives the task's score


def test_weights(run: Any) -> None:
    out = run(steps(weights={"good": 3, "bad": 0}))["by_id"]["total"]["output"]
    assert out["score"] == pytest.approx((3 * 1 + 0.5) / 4)


def test_all_pass_and_any_pass(run: Any) -> None:
    assert run(steps("all_pass"))["by_id"]["total"]["output"]["score"] == 0.0
    only_good = run(steps("all_pass", verifiers=("good",)))
    assert only_good["by_id"]["total"]["output"]["score"] == 1.0 and only_good["passed"] is True
    any_pass = run(steps("any_pass"))["by_id"]["total"]["output"]
    assert any_pass["score"] == 1.0 and any_pass["passed"] is True
    assert run(steps("any_pass", verifiers=("half", "bad")))["by_id"]["total"]["output"]["score"] == 0.0


def test_verifier_that_failed_counts_as_zero(run: Any) -> None:
    task = steps()
    task[1] = {
        "id": "good",
        "type": "agent_prompt_response_verifier",
        "prompt_step": "nothing",
        "checks": [{"contains": "x"}],
        "fail_task_on_error": False,
        "depends_on": ["nothing"],
    }
    task.insert(0, {"id": "nothing", "type": "test_fail", "fail_task_on_error": False})
    record = run(task)
    out = record["by_id"]["total"]["output"]
    assert out["verifiers"]["good"]["missing"] is True
    assert out["rows"][0] == {
        "criterion": "good",
        "passed": False,
        "score": 0.0,
        "weight": 1.0,
        "detail": "the verifier produced no result (it failed or did not run)",
    }
    assert out["score"] == pytest.approx(0.5 / 3)


def test_non_verifier_step_fails(run: Any) -> None:
    record = run(steps(verifiers=("good", "ask")))
    step = record["by_id"]["total"]
    assert step["status"] == "failed" and "'ask' is not a verifier" in step["error"]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"verifiers": []}, "verifiers", "empty"),
        ({"verifiers": ["good", "nope"]}, "verifiers", "no step 'nope'"),
        ({"verifiers": ["good", "good"]}, "verifiers", "listed twice"),
        ({"verifiers": ["good"], "weights": {"bad": 1}}, "weights.bad", "not in `verifiers`"),
        ({"verifiers": ["good"], "weights": {"good": -1}}, "weights.good", "negative"),
        ({"verifiers": ["good"], "weights": {"good": 0}}, "weights", "every weight is 0"),
        ({"verifiers": ["good"], "method": "median"}, "method", "Input should be"),
    ],
)
def test_preflight(run: Any, fields: dict[str, Any], field: str, message: str) -> None:
    task = steps()
    task[-1] = {"id": "total", "type": "aggregate_verifiers", **fields}
    with pytest.raises(TaskError) as err:
        run(task)
    text = str(err.value)
    assert "step 'total' (aggregate_verifiers)" in text and f"field `{field}`" in text and message in text
