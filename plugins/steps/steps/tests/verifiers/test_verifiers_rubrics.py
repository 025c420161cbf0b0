"""rubrics_verifier inside real tasks: deterministic checks, the LLM judge (against a local stand-in
OpenAI-compatible server), and a criterion that needs a model that is not configured (not graded, never a pass)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime import TaskError
from agentenv_testing.tasks import temporary_config

RESPONSE = "Refunded 89.99 for the damaged Trailblazer boots and closed TCK-9001."
REFUND = {"tool": "issue_refund", "args": {"order_id": "ORD-5001", "amount": 89.99, "reason": "split sole"}}


def world(*calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "env",
        "type": "test_world",
        "key": "env",
        "envs": ["helpdesk"],
        "artifacts": ["acme"],
        "calls": list(calls),
    }


def respond(text: str = RESPONSE) -> dict[str, Any]:
    return {"id": "ask", "type": "test_response", "response": text, "prompt": "Handle ticket TCK-9001."}


def rubric(*criteria: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "id": "grade",
        "type": "rubrics_verifier",
        "prompt_step": "ask",
        "env": "env",
        "criteria": list(criteria),
        **fields,
    }


DETERMINISTIC = [
    {"name": "mentions amount", "weight": 1, "check": {"response_contains": "89.99"}},
    {"name": "cites ticket", "check": {"response_regex": r"TCK-\d+"}},
    {
        "name": "refunded boots only",
        "weight": 2,
        "description": "refund of 89.99 on ORD-5001",
        "check": {"tool_called": "issue_refund", "args": {"order_id": "ORD-5001", "amount": 89.99}},
    },
    {
        "name": "refund in state",
        "check": {
            "sql": "SELECT SUM(amount_cents) FROM refunds WHERE order_id='ORD-5001'",
            "env": "helpdesk",
            "equals": 8999,
        },
    },
]


def test_deterministic_criteria_pass(run: Any) -> None:
    record = run([world(REFUND), respond(), rubric(*DETERMINISTIC)])
    out = record["by_id"]["grade"]["output"]
    assert record["status"] == "succeeded", record["by_id"]["grade"]
    assert out["score"] == 1.0 and out["passed"] is True and "judge" not in out
    assert "1 matching call(s) of issue_refund" in out["rows"][2]["detail"]
    assert record["score"] == 1.0


def test_deterministic_criteria_wrong_refund(run: Any) -> None:
    wrong = {"tool": "issue_refund", "args": {"order_id": "ORD-5001", "amount": 40.0, "reason": "socks"}}
    record = run([world(wrong), respond("Refunded 40.00."), rubric(*DETERMINISTIC)])
    out = record["by_id"]["grade"]["output"]
    assert [r["passed"] for r in out["rows"]] == [False, False, False, False]
    assert out["score"] == 0.0 and record["passed"] is False
    assert "no successful call of issue_refund matched (1 successful call(s) of it in all)" in out["rows"][2]["detail"]


def test_tool_called_ignores_failed_and_system_calls(run: Any) -> None:
    too_much = {"tool": "issue_refund", "args": {"order_id": "ORD-5001", "amount": 500.0, "reason": "x"}}
    by_rules = {**REFUND, "role": "system"}
    criteria = [
        {"name": "refund tried", "check": {"tool_called": "issue_refund"}},
        {"name": "system refund", "check": {"tool_called": "issue_refund", "role": "system"}},
        {"name": "result predicate", "check": {"tool_called": "issue_refund", "result": {"refund.amount": {"gt": 50}}}},
    ]
    out = run([world(too_much, by_rules), respond(), rubric(*criteria)])["by_id"]["grade"]["output"]
    assert [r["passed"] for r in out["rows"]] == [False, True, False]


def test_predicates_from_triggers(run: Any) -> None:
    criteria = [
        {
            "name": "reason mentions sole",
            "check": {"tool_called": "issue_refund", "args": {"reason": {"contains": "SOLE"}}},
        },
        {"name": "amount in range", "check": {"tool_called": "issue_refund", "args": {"amount": {"gt": 80, "lt": 90}}}},
    ]
    out = run([world(REFUND), respond(), rubric(*criteria)])["by_id"]["grade"]["output"]
    assert out["score"] == 1.0


def test_description_only_without_model_is_not_graded_and_never_passes(run: Any) -> None:
    criteria = [*DETERMINISTIC, {"name": "polite", "description": "The reply apologises to the customer."}]
    record = run([world(REFUND), respond(), rubric(*criteria)])  # no [model]: was refused before the task started
    out = record["by_id"]["grade"]["output"]
    assert record["by_id"]["grade"]["status"] == "succeeded"
    assert out["graded"] is False and out["passed"] is False and out["not_graded"] == ["polite"]
    assert [r["passed"] for r in out["rows"]] == [True, True, True, True, False]
    polite = out["rows"][4]
    assert polite["graded"] is False and polite["detail"].startswith("not graded: no judge model")
    assert "model.base_url and model.model not set" in polite["detail"] and "--model" in polite["detail"]
    assert out["score"] == 1.0  # the graded rows' score; the run has none
    assert record["status"] == "succeeded" and record["graded"] is False
    assert record["passed"] is False and record["score"] is None


# ---- the LLM judge, against a stand-in OpenAI-compatible server on loopback ---------------------------
class Judge:
    """What the stand-in server answers, and what it was asked."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.content: str | None = None
        self.status = 200


@pytest.fixture
def judge() -> Iterator[tuple[Judge, str]]:
    state = Judge()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            completion = {
                "id": "c1",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": state.content}}
                ],
            }
            data = json.dumps(completion).encode() if state.status == 200 else b'{"error": "nope"}'
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def model_config(tmp_path: Path, base_url: str) -> Any:
    config = temporary_config(tmp_path)
    config.values["model"] = {"base_url": base_url, "model": "judge-1", "api_key": "env:VERIFIERS_TEST_JUDGE_KEY"}
    return config


LLM_CRITERIA = [
    {"name": "refunded boots only", "weight": 2, "check": {"tool_called": "issue_refund", "args": {"amount": 89.99}}},
    {"name": "polite", "weight": 1, "description": "The reply apologises to the customer."},
    {"name": "explains", "weight": 1, "description": "The reply says what was refunded and why."},
]


def verdicts(**passed: bool) -> str:
    return json.dumps({"verdicts": [{"name": n, "passed": p, "reason": f"{n} judged"} for n, p in passed.items()]})


def test_llm_judge_decides_description_only(
    run: Any, judge: tuple[Judge, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = judge
    monkeypatch.setenv("VERIFIERS_TEST_JUDGE_KEY", "sk-test")
    state.content = verdicts(polite=False, explains=True)
    record = run([world(REFUND), respond(), rubric(*LLM_CRITERIA)], config=model_config(tmp_path, url))
    out = record["by_id"]["grade"]["output"]
    assert record["by_id"]["grade"]["status"] == "succeeded", record["by_id"]["grade"]
    assert [r["passed"] for r in out["rows"]] == [True, False, True]
    assert out["score"] == pytest.approx(3 / 4) and out["passed"] is False
    assert out["rows"][1]["detail"] == "LLM judge (judge-1): polite judged"
    assert out["judge"] == {"model": "judge-1", "criteria": ["polite", "explains"]}
    (request,) = state.requests
    body = request["body"]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    assert body["model"] == "judge-1" and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    asked = body["messages"][1]["content"]
    assert "name: polite" in asked and "name: refunded boots only" not in asked  # the check decided that one
    assert RESPONSE in asked and "Handle ticket TCK-9001." in asked and "called issue_refund" in asked


def test_llm_judge_all_criteria_and_model_override(
    run: Any, judge: tuple[Judge, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = judge
    monkeypatch.setenv("VERIFIERS_TEST_JUDGE_KEY", "sk-test")
    state.content = verdicts(**{"refunded boots only": True, "polite": True, "explains": True})
    criteria = [{**c, "description": c.get("description", "Refunded the boots only.")} for c in LLM_CRITERIA]
    record = run(
        [world(REFUND), respond(), rubric(*criteria, judge="llm")],
        config=model_config(tmp_path, url),
        overrides={"model": "judge-2"},
    )
    out = record["by_id"]["grade"]["output"]
    assert out["score"] == 1.0 and out["judge"]["model"] == "judge-2"
    assert state.requests[0]["body"]["model"] == "judge-2"
    assert "name: refunded boots only" in state.requests[0]["body"]["messages"][1]["content"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("this is not json", "the message is not JSON"),
        (json.dumps({"polite": True}), '"verdicts" list'),
        (verdicts(polite=True), "no verdict for 'explains'"),
        (verdicts(polite=True, explains=True, extra=True), "'extra', which is not one of the criteria"),
        (
            json.dumps({"verdicts": [{"name": "polite", "passed": "yes"}, {"name": "explains", "passed": True}]}),
            "not true/false",
        ),
    ],
)
def test_llm_judge_bad_answers_fail(
    run: Any, judge: tuple[Judge, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, message: str
) -> None:
    state, url = judge
    monkeypatch.setenv("VERIFIERS_TEST_JUDGE_KEY", "sk-test")
    state.content = content
    record = run([world(REFUND), respond(), rubric(*LLM_CRITERIA)], config=model_config(tmp_path, url))
    step = record["by_id"]["grade"]
    assert step["status"] == "failed" and "unusable answer" in step["error"] and message in step["error"]
    assert record["passed"] is False


def test_llm_judge_http_error_fails(
    run: Any, judge: tuple[Judge, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = judge
    monkeypatch.setenv("VERIFIERS_TEST_JUDGE_KEY", "sk-test")
    state.status = 401
    record = run([world(REFUND), respond(), rubric(*LLM_CRITERIA)], config=model_config(tmp_path, url))
    assert "answered HTTP 401" in record["by_id"]["grade"]["error"]


def test_llm_judge_unreachable_fails(run: Any, tmp_path: Path) -> None:
    config = temporary_config(tmp_path)
    config.values["model"] = {"base_url": "http://127.0.0.1:9/v1", "model": "judge-1"}
    record = run([world(REFUND), respond(), rubric(*LLM_CRITERIA, timeout=5)], config=config)
    assert "could not be reached" in record["by_id"]["grade"]["error"]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"criteria": []}, "criteria", "empty"),
        (
            {"criteria": [{"name": "a", "description": "x"}], "judge": "deterministic"},
            "criteria.0.check",
            "has no `check`",
        ),
        ({"criteria": [{"name": "a"}]}, "criteria.0.description", "needs a `description`"),
        (
            {"criteria": [{"name": "a", "check": {"response_contains": "x"}}], "judge": "llm"},
            "criteria.0.description",
            "needs a `description`",
        ),
        (
            {"criteria": [{"name": "a", "check": {"response_contains": "x", "sql": "SELECT 1"}}]},
            "criteria.0.check",
            "exactly one of",
        ),
        (
            {"criteria": [{"name": "a", "check": {"response_contains": "x", "equals": 1}}]},
            "criteria.0.check",
            "`equals` belongs with `sql`",
        ),
        ({"criteria": [{"name": "a", "check": {"response_regex": "("}}]}, "criteria.0.check", "regular expression"),
        (
            {
                "criteria": [
                    {"name": "a", "check": {"response_contains": "x"}},
                    {"name": "a", "check": {"response_contains": "y"}},
                ]
            },
            "criteria",
            "repeat",
        ),
        ({"criteria": [{"name": "a", "check": {"sql": "SELECT 1"}}], "env": "nope"}, "env", "no step 'nope'"),
        ({"criteria": [{"name": "a", "check": {"sql": "SELECT 1"}}], "env": None}, "env", "checks the world"),
        (
            {"criteria": [{"name": "a", "check": {"response_contains": "x"}}], "prompt_step": None},
            "prompt_step",
            "checks the response",
        ),
        (
            {"criteria": [{"name": "a", "description": "x"}], "prompt_step": None, "env": None},
            "prompt_step",
            "needs evidence",
        ),
        (
            {"criteria": [{"name": "a", "check": {"response_contains": "x"}}], "judge": "maybe"},
            "judge",
            "Input should be",
        ),
    ],
)
def test_preflight(run: Any, fields: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(TaskError) as err:
        run([world(), respond(), rubric(**fields)])
    text = str(err.value)
    assert "step 'grade' (rubrics_verifier)" in text and f"field `{field}`" in text and message in text
