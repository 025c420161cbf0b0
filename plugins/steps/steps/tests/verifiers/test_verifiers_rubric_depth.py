"""rubrics_verifier in depth: partial credit, evidence and mistakes, negative criteria, a per-step judge model,
policy and facts, grading up to a turn, a trajectory filter, score aggregators and agent judges.

Judges run against the repository's stand-in model (`agentenv-model-standin`, on loopback) or as scripted
agents; no test reaches a network.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentenv_model_standin.api import StandInModel
from agentenv_runtime import TaskError
from agentenv_testing.tasks import temporary_config

REFUND = {"call": "issue_refund", "args": {"order_id": "ORD-5001", "amount": 89.99, "reason": "split sole"}}
LOOKUP = {"call": "get_order", "args": {"order_id": "ORD-5001"}}


def conversation() -> list[dict[str, Any]]:
    """A real helpdesk world and a scripted support agent over two turns: look up, then refund."""
    policy = {
        "turn": [
            {"actions": [LOOKUP, {"say": "Looking into ORD-5001 for you."}]},
            {"actions": [REFUND, {"say": "Refunded 89.99 for the split sole. Sorry about that!"}]},
        ]
    }
    return [
        {"id": "env", "type": "deploy_env", "envs": ["helpdesk"], "artifacts": ["acme"]},
        {"id": "agent", "type": "deploy_agent", "env": "env", "kind": "scripted", "settings": {"policy_data": policy}},
        {
            "id": "ask",
            "type": "prompt_agent",
            "agent": "agent",
            "prompt": "Handle ticket TCK-9001.",
            "user": {"turns": ["Please refund the boots."]},
        },
    ]


def rubric(*criteria: dict[str, Any], **fields: Any) -> dict[str, Any]:
    base = {"id": "grade", "type": "rubrics_verifier", "prompt_step": "ask", "env": "env"}
    return {**base, "criteria": list(criteria), **fields}


def graded(run: Any, *criteria: dict[str, Any], **fields: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    record = run([*conversation(), rubric(*criteria, **fields)])
    grade = record["by_id"]["grade"]
    assert grade["status"] == "succeeded", grade
    return record, grade["output"]


def answer(*verdicts: dict[str, Any], **more: Any) -> list[dict[str, Any]]:
    """A stand-in script whose one turn is the judge's JSON answer."""
    return [{"text": json.dumps({"verdicts": list(verdicts), **more})}]


REFUNDED = {"name": "refunded", "check": {"tool_called": "issue_refund", "args": {"amount": 89.99}}}
POLITE = {"name": "polite", "description": "The reply apologises to the customer."}
EXPLAINS = {"name": "explains", "weight": 2, "description": "The reply says what was refunded and why."}


def test_partial_credit_evidence_mistakes_policy_and_facts_with_the_steps_own_judge_model(run: Any) -> None:
    script = answer(
        {"name": "polite", "score": 1, "reason": "says sorry", "evidence": "Sorry about that!"},
        {"name": "explains", "score": 0.5, "reason": "amount, no item", "evidence": "Refunded 89.99"},
        mistakes=["did not name the boots"],
    )
    with StandInModel(script) as model:  # no [model] in the config: the step names its judge
        record, out = graded(
            run,
            REFUNDED,
            POLITE,
            EXPLAINS,
            judge_model={"base_url": model.openai_url, "model": "grader-7"},
            output="partial_credit",
            evidence=True,
            mistakes=True,
            policy="Refunds over 100 need a manager.",
            facts=["The customer is Dana Kim.", "ORD-5001 holds one pair of boots."],
        )
        (request,) = model.model_requests
    rows = {r["criterion"]: r for r in out["rows"]}
    assert rows["polite"]["score"] == 1.0 and rows["polite"]["passed"] is True
    assert rows["explains"]["score"] == 0.5 and rows["explains"]["passed"] is False  # pass_at = 1.0
    assert rows["explains"]["evidence"] == "Refunded 89.99"
    assert out["mistakes"] == ["did not name the boots"]
    assert out["score"] == pytest.approx((1 + 1 + 2 * 0.5) / 4) and out["passed"] is False
    assert out["judge"] == {"model": "grader-7", "criteria": ["polite", "explains"]} and out["graded"] is True
    assert record["graded"] is True and record["score"] == pytest.approx(0.75)
    system, user = (m["content"] for m in request.body["messages"])
    assert request.body["model"] == "grader-7"
    assert '"score": <a number from 0' in system and '"evidence"' in system and '"mistakes"' in system
    assert "Refunds over 100 need a manager." in system
    assert "- The customer is Dana Kim." in user and "called issue_refund" in user


def test_pass_at_lowers_the_bar_for_partial_credit(run: Any) -> None:
    with StandInModel(answer({"name": "polite", "score": 0.7, "reason": "mostly"})) as model:
        _, out = graded(
            run, POLITE, judge_model={"base_url": model.openai_url, "model": "m"}, output="partial_credit", pass_at=0.6
        )
    assert out["rows"][0]["passed"] is True and out["passed"] is True and out["score"] == pytest.approx(0.7)


def test_negative_criteria_penalise_only_when_the_mistake_was_made(run: Any) -> None:
    over_refund = {
        "name": "refund over 50",
        "negative": True,
        "weight": 1,
        "check": {"tool_called": "issue_refund", "args": {"amount": {"gt": 50}}},
    }
    huge_refund = {
        "name": "refund over 500",
        "negative": True,
        "check": {"tool_called": "issue_refund", "args": {"amount": {"gt": 500}}},
    }
    _, out = graded(run, REFUNDED, over_refund, huge_refund)
    rows = {r["criterion"]: r for r in out["rows"]}
    assert rows["refund over 50"]["passed"] is False and rows["refund over 50"]["negative"] is True
    assert rows["refund over 50"]["detail"].startswith("mistake made:")
    assert rows["refund over 500"]["passed"] is True and rows["refund over 500"]["detail"].startswith(
        "mistake not made:"
    )
    assert out["score"] == 0.0 and out["passed"] is False  # (1 - 1) / 1: the penalty takes the whole positive weight

    _, only_negative = graded(run, huge_refund)
    assert only_negative["score"] == 1.0 and only_negative["passed"] is True


def test_a_negative_criterion_met_by_the_judges_verdict_fails_its_row(run: Any) -> None:
    rude = {"name": "rude", "negative": True, "weight": 1, "description": "The reply insults the customer."}
    with StandInModel(answer({"name": "rude", "passed": True, "reason": "it does"})) as model:
        _, out = graded(run, REFUNDED, rude, judge_model={"base_url": model.openai_url, "model": "m"})
        user = model.model_requests[0].body["messages"][1]["content"]
    assert "NEGATIVE: met means the agent made this mistake" in user
    assert out["rows"][1]["passed"] is False and out["rows"][1]["score"] == 0.0 and out["score"] == 0.0


@pytest.mark.parametrize(
    ("aggregator", "score"), [("weighted_mean", 2 / 3), ("mean", 1 / 2), ("all_pass", 0.0), ("min", 0.0)]
)
def test_aggregators(run: Any, aggregator: str, score: float) -> None:
    missing = {"name": "escalated", "check": {"tool_called": "escalate_ticket"}}
    _, out = graded(run, {**REFUNDED, "weight": 2}, missing, aggregator=aggregator)
    assert out["score"] == pytest.approx(score) and out["aggregator"] == aggregator


def test_grading_up_to_a_turn_sees_the_conversation_as_it_stood_then(run: Any) -> None:
    said = {"name": "said refunded", "check": {"response_contains": "Refunded 89.99"}}
    looked = {"name": "looked up", "check": {"tool_called": "get_order"}}
    _, first = graded(run, REFUNDED, said, looked, up_to_turn=1)
    assert [r["passed"] for r in first["rows"]] == [False, False, True]  # the refund came in turn 2
    _, second = graded(run, REFUNDED, said, looked, up_to_turn=2)
    assert [r["passed"] for r in second["rows"]] == [True, True, True]

    record = run([*conversation(), rubric(REFUNDED, up_to_turn=3)])
    assert (
        "the prompt step's conversation has 2 turn(s), so turn 3 cannot be graded" in record["by_id"]["grade"]["error"]
    )


def test_up_to_turn_with_the_judge_sends_only_that_part(run: Any) -> None:
    with StandInModel(answer({"name": "polite", "passed": False, "reason": "no apology yet"})) as model:
        graded(run, POLITE, up_to_turn=1, judge_model={"base_url": model.openai_url, "model": "m"})
        user = model.model_requests[0].body["messages"][1]["content"]
    assert "Looking into ORD-5001 for you." in user and "called get_order" in user
    assert "issue_refund" not in user and "Sorry about that" not in user


def test_trajectory_filter_narrows_what_the_judge_reads(run: Any) -> None:
    with StandInModel(answer({"name": "polite", "passed": True, "reason": "ok"})) as model:
        graded(
            run,
            POLITE,
            trajectory_filter={"exclude_tools": ["get_order"]},
            judge_model={"base_url": model.openai_url, "model": "m"},
        )
        user = model.model_requests[0].body["messages"][1]["content"]
    assert "called issue_refund" in user and "get_order" not in user


def test_a_scripted_agent_judge_decides_offline(run: Any) -> None:
    verdict = json.dumps({"verdicts": [{"name": "polite", "passed": True, "reason": "it apologises"}]})
    policy = {"turn": [{"actions": [{"say": f"```json\n{verdict}\n```"}]}]}
    judge = {"settings": {"policy_data": policy}}  # no kind: a scripted judge
    record, out = graded(run, REFUNDED, POLITE, judge_agent=judge)
    assert out["rows"][1]["detail"] == "scripted judge agent: it apologises" and out["passed"] is True
    assert out["judge"] == {"agent": "scripted", "criteria": ["polite"]} and record["passed"] is True


def test_an_llm_agent_judge_reads_the_trajectory_in_its_prompt(run: Any) -> None:
    with StandInModel(answer({"name": "polite", "passed": False, "reason": "too curt"})) as model:
        judge = {"kind": "llm", "settings": {"base_url": model.openai_url, "model": "judge-agent"}}
        _, out = graded(run, POLITE, judge_agent=judge)
        (request,) = model.model_requests
    assert out["rows"][0]["passed"] is False and out["judge"]["agent"] == "llm"
    prompt = json.dumps(request.body["messages"])
    assert "called issue_refund" in prompt and "strict, impartial grader" in prompt


def test_an_llm_agent_judge_with_no_model_is_not_graded(run: Any) -> None:
    record, out = graded(run, REFUNDED, POLITE, judge_agent={"kind": "llm"})  # no [model], none in its settings
    polite = out["rows"][1]
    assert polite["graded"] is False and polite["passed"] is False and out["not_graded"] == ["polite"]
    assert "judge_agent.settings.base_url and judge_agent.settings.model not set" in polite["detail"]
    assert out["judge"] == {"agent": "llm", "criteria": ["polite"]} and out["graded"] is False
    assert record["graded"] is False and record["passed"] is False and record["score"] is None


def test_an_llm_agent_judge_takes_its_model_from_the_config(run: Any, tmp_path: Path) -> None:
    config = temporary_config(tmp_path)
    with StandInModel(answer({"name": "polite", "passed": True, "reason": "says sorry"})) as model:
        config.values["model"] = {"base_url": model.openai_url, "model": "from-config"}
        record = run([*conversation(), rubric(POLITE, judge_agent={"kind": "llm"})], config=config)
        (request,) = model.model_requests
    assert request.body["model"] == "from-config" and record["by_id"]["grade"]["output"]["passed"] is True
    assert record["graded"] is True and record["passed"] is True


def test_a_model_on_another_api_grades_through_an_llm_judge_agent_not_the_chat_judge(run: Any, tmp_path: Path) -> None:
    config = temporary_config(tmp_path)
    with StandInModel(answer({"name": "polite", "passed": True, "reason": "says sorry"})) as model:
        config.values["model"] = {"base_url": model.url, "model": "m", "api": "anthropic"}
        refused = run([*conversation(), rubric(POLITE)], config=config)["by_id"]["grade"]
        record = run([*conversation(), rubric(POLITE, judge_agent={"kind": "llm"})], config=config)
        (request,) = model.model_requests
    assert refused["status"] == "failed" and "speaks openai-chat (<base_url>/chat/completions) only" in refused["error"]
    assert "[model] api is 'anthropic'" in refused["error"] and "judge_agent" in refused["error"]
    assert request.api == "anthropic" and record["by_id"]["grade"]["output"]["passed"] is True


@pytest.mark.parametrize(
    ("verdict", "fields", "message"),
    [
        ({"name": "polite", "score": 1.5, "reason": "x"}, {"output": "partial_credit"}, "not a number from 0 to 1"),
        ({"name": "polite", "passed": True, "reason": "x"}, {"evidence": True}, "`evidence` of 'polite' is missing"),
        ({"name": "polite", "passed": True, "reason": "x"}, {"mistakes": True, "_mistakes": "none"}, "not a list"),
    ],
)
def test_unusable_judge_answers_fail(run: Any, verdict: dict[str, Any], fields: dict[str, Any], message: str) -> None:
    extra = {"mistakes": fields.pop("_mistakes")} if "_mistakes" in fields else {}
    with StandInModel(answer(verdict, **extra)) as model:
        record = run(
            [*conversation(), rubric(POLITE, judge_model={"base_url": model.openai_url, "model": "m"}, **fields)]
        )
    step = record["by_id"]["grade"]
    assert step["status"] == "failed" and "unusable answer" in step["error"] and message in step["error"]
    assert record["passed"] is False


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        (
            {"up_to_turn": 1, "criteria": [{"name": "a", "check": {"sql": "SELECT 1"}}]},
            "criteria.0.check",
            "final state",
        ),
        ({"judge_model": {"model": "m"}, "judge_agent": {"kind": "scripted"}}, "judge_agent", "not both"),
        ({"judge_model": {"api_key": "sk-literal"}}, "judge_model.api_key", "String should match pattern"),
        ({"output": "stars"}, "output", "Input should be"),
        ({"aggregator": "median"}, "aggregator", "Input should be"),
    ],
)
def test_preflight_of_the_new_fields(run: Any, fields: dict[str, Any], field: str, message: str) -> None:
    criteria = fields.pop("criteria", [REFUNDED])
    with pytest.raises(TaskError) as err:
        run([*conversation(), rubric(*criteria, **fields)])
    text = str(err.value)
    assert f"field `{field}`" in text and message in text, text


def test_trajectory_filter_fields() -> None:
    from agentenv_steps.verifiers.graded_view import TrajectoryFilter

    ok = {"tool": "get_order", "role": "default"}
    failed = {"tool": "issue_refund", "role": "default", "error": {"message": "too much"}}
    system = {"tool": "send_email", "role": "system"}
    events = [ok, failed, system]
    assert [e for e in events if TrajectoryFilter().keeps(e)] == events
    assert [e for e in events if TrajectoryFilter(errors=False).keeps(e)] == [ok, system]
    assert [e for e in events if TrajectoryFilter(roles=["system"]).keeps(e)] == [system]
    assert [e for e in events if TrajectoryFilter(tools=["get_order", "issue_refund"]).keeps(e)] == [ok, failed]
