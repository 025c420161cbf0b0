"""Validators over other steps' verdicts, inside real tasks: 32 assessment, 33 gate, 37 combine."""

from __future__ import annotations

from typing import Any

import pytest
from agentenv_runtime import TaskError
from validators_testkit import world_step

ASSESSMENT = {
    "post_message": {"works": True, "note": "posted to #support"},
    "list_users": {"works": False, "note": "returned nothing"},
}


def verifier(step_id: str, passed: bool, score: float | None = None) -> dict[str, Any]:
    row = {"criterion": "c", "passed": passed, "score": 1.0 if passed else 0.0, "weight": 1.0, "detail": ""}
    return {
        "id": step_id,
        "type": "test_output",
        "score": score if score is not None else row["score"],
        "passed": passed,
        "rows": [row],
    }


def test_assessment_per_tool(run: Any) -> None:
    steps = [
        {"id": "ask", "type": "test_output", "structured": ASSESSMENT},
        {"id": "assess", "type": "verify_mcp_env_assessment", "prompt_step": "ask"},
    ]
    out = run(steps)["by_id"]["assess"]["output"]
    rows = {r["criterion"]: r for r in out["rows"]}
    assert rows["tool post_message"] == {
        "criterion": "tool post_message",
        "passed": True,
        "score": 1.0,
        "weight": 1.0,
        "detail": "posted to #support",
    }
    assert rows["tool list_users"]["passed"] is False and out["score"] == 0.5 and out["passed"] is False


def test_assessment_against_the_world_tools(run: Any) -> None:
    steps = [
        world_step(envs=["slack"]),
        {"id": "ask", "type": "test_output", "response": '{"tools": {"post_message": {"works": true}, "fly": {}}}'},
        {
            "id": "assess",
            "type": "verify_mcp_env_assessment",
            "prompt_step": "ask",
            "field": "response",
            "env": "world",
        },
    ]
    rows = {r["criterion"]: r for r in run(steps)["by_id"]["assess"]["output"]["rows"]}
    assert rows["tool post_message"]["passed"]
    assert rows["tool list_users"]["detail"] == "not assessed"
    assert rows["tool fly"]["detail"] == "assessed, but the world has no such tool"
    assert len(rows) == 19  # 18 slack tools + the unknown one


def test_assessment_that_is_not_one_fails_the_step(run: Any) -> None:
    steps = [
        {"id": "ask", "type": "test_output", "structured": None, "response": "all good!"},
        {"id": "assess", "type": "verify_mcp_env_assessment", "prompt_step": "ask", "fail_task_on_error": False},
    ]
    record = run(steps)
    assert record["by_id"]["assess"]["status"] == "failed"
    assert "not an assessment" in record["by_id"]["assess"]["error"]


def test_gate_open_closed_and_fail_closed(run: Any) -> None:
    gate = {"id": "gate", "type": "validation_gate_aggregator"}
    base = [verifier("schema", True), verifier("card", True), verifier("style", False)]
    opened = run([*base, {**gate, "validators": ["schema", "card", {"id": "style", "required": False}]}])
    out = opened["by_id"]["gate"]["output"]
    assert out["gate"] == "open" and out["score"] == 1.0 and out["passed"] is True and opened["passed"] is True
    assert out["validators"]["style"] == {"required": False, "passed": False, "score": 0.0}
    closed = run([*base, {**gate, "validators": ["schema", "style"]}])["by_id"]["gate"]["output"]
    assert closed["gate"] == "closed" and closed["score"] == 0.0 and closed["blocking"] == ["style"]
    missing = [
        verifier("schema", True),
        {"id": "card", "type": "test_fail", "fail_task_on_error": False},
        {**gate, "validators": ["schema", "card"]},
    ]
    out = run(missing)["by_id"]["gate"]["output"]
    assert out["gate"] == "closed" and out["validators"]["card"]["missing"] is True
    assert "no verdict" in out["rows"][1]["detail"]


def test_gate_over_real_validators(run: Any) -> None:
    steps = [
        world_step(envs=["broken_notes"], artifacts=[]),
        {"id": "schema", "type": "verify_mcp_tool_schema", "env": "world"},
        {"id": "card", "type": "verify_env_card", "env": "world"},
        {"id": "gate", "type": "validation_gate_aggregator", "validators": ["card", "schema"]},
    ]
    out = run(steps)["by_id"]["gate"]["output"]
    assert out["gate"] == "closed" and out["blocking"] == ["schema"]
    assert "tool find" in out["rows"][1]["detail"]


def test_combine_roundtrip_and_judge(run: Any) -> None:
    steps = [
        world_step(envs=["slack"]),
        {"id": "trip", "type": "verify_universe_load_export_roundtrip", "env": "world"},
        verifier("judge", True, 0.9),
        {"id": "both", "type": "combine_universe_verdicts", "roundtrip": "trip", "judge": "judge"},
    ]
    out = run(steps)["by_id"]["both"]["output"]
    assert out["verdict"] == "pass" and out["score"] == 1.0 and out["reasons"] == []
    assert out["roundtrip"] == {"step": "trip", "passed": True, "score": 1.0}
    assert "roundtrip/slack export → reload → export" in [r["criterion"] for r in out["rows"]]
    steps[2] = verifier("judge", False, 0.4)
    steps[3] = {**steps[3], "method": "weighted_average", "weights": {"roundtrip": 3}, "threshold": 0.8}
    out = run(steps)["by_id"]["both"]["output"]
    assert out["score"] == pytest.approx((3 * 1.0 + 0.4) / 4) and out["verdict"] == "pass"
    steps[2] = {"id": "judge", "type": "test_fail", "fail_task_on_error": False}
    out = run(steps)["by_id"]["both"]["output"]
    assert out["verdict"] == "fail" and out["judge"]["missing"] is True and out["reasons"][0].startswith("judge:")


def test_combine_refuses_a_non_verifier(run: Any) -> None:
    steps = [
        {"id": "a", "type": "test_output", "text": "hi"},
        verifier("judge", True),
        {"id": "both", "type": "combine_universe_verdicts", "roundtrip": "a", "judge": "judge"},
    ]
    record = run(steps, **{})
    assert record["status"] == "failed" and "is not a verifier" in record["by_id"]["both"]["error"]


@pytest.mark.parametrize(
    ("step", "field", "message"),
    [
        ({"type": "validation_gate_aggregator", "validators": []}, "validators", "empty"),
        ({"type": "validation_gate_aggregator", "validators": ["v", "v"]}, "validators", "listed twice"),
        ({"type": "validation_gate_aggregator", "validators": ["nope"]}, "validators", "no step 'nope'"),
        (
            {"type": "validation_gate_aggregator", "validators": [{"id": "v", "required": False}]},
            "validators",
            "always open",
        ),
        ({"type": "combine_universe_verdicts", "roundtrip": "v", "judge": "v"}, "judge", "same step"),
        ({"type": "combine_universe_verdicts", "roundtrip": "x", "judge": "v"}, "roundtrip", "no step 'x'"),
        ({"type": "verify_mcp_env_assessment", "prompt_step": "zz"}, "prompt_step", "no step 'zz'"),
        (
            {"type": "verify_mcp_env_assessment", "prompt_step": "v", "tools": ["a"], "url": "http://h"},
            "tools",
            "either",
        ),
    ],
)
def test_preflight(run: Any, step: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(TaskError) as err:
        run([verifier("v", True), {"id": "check", **step}])
    text = str(err.value)
    assert "'check'" in text and field in text and message in text, text
