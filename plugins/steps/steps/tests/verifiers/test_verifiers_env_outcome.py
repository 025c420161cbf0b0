"""env_outcome_verifier inside real tasks: SQL checks, a bundle script, a module function, bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime import TaskError

REFUND = {"tool": "issue_refund", "args": {"order_id": "ORD-5001", "amount": 89.99, "reason": "split sole"}}
CLOSE = {"tool": "close_ticket", "args": {"ticket_id": "TCK-9001", "resolution": "Refunded the boots"}}


def world(*calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "env",
        "type": "test_world",
        "key": "env",
        "envs": ["helpdesk"],
        "artifacts": ["acme"],
        "calls": list(calls),
    }


SQL_CHECKS = [
    {
        "name": "refund is 89.99",
        "env": "helpdesk",
        "weight": 3,
        "sql": "SELECT SUM(amount_cents) FROM refunds WHERE order_id = 'ORD-5001'",
        "equals": 8999,
    },
    {
        "name": "ticket closed",
        "env": "helpdesk",
        "sql": "SELECT status FROM tickets WHERE ticket_id = 'TCK-9001'",
        "equals": "closed",
    },
    {"name": "some refund exists", "sql": "SELECT COUNT(*) FROM refunds WHERE order_id = 'ORD-5001'"},
]


def test_sql_checks_all_pass(run: Any) -> None:
    record = run(
        [world(REFUND, CLOSE), {"id": "grade", "type": "env_outcome_verifier", "env": "env", "checks": SQL_CHECKS}]
    )
    assert record["status"] == "succeeded", record["by_id"]
    out = record["by_id"]["grade"]["output"]
    assert out["score"] == 1.0 and out["passed"] is True
    assert [r["criterion"] for r in out["rows"]] == ["refund is 89.99", "ticket closed", "some refund exists"]
    assert record["score"] == 1.0 and record["passed"] is True
    assert record["verifiers"]["grade"]["score"] == 1.0


def test_sql_checks_weighted_fraction(run: Any) -> None:
    wrong = {"tool": "issue_refund", "args": {"order_id": "ORD-5001", "amount": 129.99, "reason": "all"}}
    record = run([world(wrong), {"id": "grade", "type": "env_outcome_verifier", "env": "env", "checks": SQL_CHECKS}])
    out = record["by_id"]["grade"]["output"]
    assert [r["passed"] for r in out["rows"]] == [False, False, True]
    assert out["score"] == pytest.approx(1 / 5)  # weights 3, 1, 1: only the last passed
    assert out["passed"] is False and record["passed"] is False
    assert "got 12999, expected 8999" in out["rows"][0]["detail"]


def test_sql_check_cannot_write(run: Any) -> None:
    check = {"name": "sneaky", "env": "helpdesk", "sql": "DELETE FROM refunds"}
    record = run([world(REFUND), {"id": "grade", "type": "env_outcome_verifier", "env": "env", "checks": [check]}])
    step = record["by_id"]["grade"]
    assert step["status"] == "failed"
    assert "field `sql`" in step["error"] and "only read" in step["error"]


def test_bad_sql_fails_with_field(run: Any) -> None:
    check = {"name": "typo", "env": "helpdesk", "sql": "SELECT nope FROM refunds"}
    record = run([world(), {"id": "grade", "type": "env_outcome_verifier", "env": "env", "checks": [check]}])
    assert record["by_id"]["grade"]["status"] == "failed"
    assert "checks[0] (typo): field `sql`" in record["by_id"]["grade"]["error"]


def test_missing_script_fails_with_path(run: Any) -> None:
    steps = [
        world(REFUND),
        {"id": "grade", "type": "env_outcome_verifier", "env": "env", "script": "verifiers/missing.py"},
    ]
    record = run(steps)
    step = record["by_id"]["grade"]
    assert step["status"] == "failed"
    assert "field `script`" in step["error"] and "missing.py does not exist" in step["error"]
    assert record["passed"] is False


def test_script_resolved_against_bundle(host: Any, tmp_path: Path) -> None:
    from agentenv_testing.tasks import run_task

    bundle = tmp_path / "bundle"
    (bundle / "verifiers").mkdir(parents=True)
    (bundle / "verifiers" / "refund.py").write_text(
        "def verify(world):\n"
        "    sql = \"SELECT SUM(amount_cents) AS c FROM refunds WHERE order_id = 'ORD-5001'\"\n"
        "    rows = world.env('helpdesk').query(sql)\n"
        "    return [{'criterion': 'boots refunded', 'passed': rows[0]['c'] == 8999, 'weight': 2,\n"
        "             'detail': f\"refunded {rows[0]['c']} cents\"},\n"
        "            {'criterion': 'ticket closed', 'passed': False}]\n"
    )
    task = {
        "name": "script",
        "steps": [
            world(REFUND),
            {"id": "grade", "type": "env_outcome_verifier", "env": "env", "script": "verifiers/refund.py"},
        ],
    }
    record = run_task(task, tmp_path, host=host, bundle_dir=bundle)
    out = next(s for s in record["steps"] if s["id"] == "grade")["output"]
    assert out["rows"][0] == {
        "criterion": "boots refunded",
        "passed": True,
        "score": 1.0,
        "weight": 2.0,
        "detail": "refunded 8999 cents",
    }
    assert out["score"] == pytest.approx(2 / 3) and out["passed"] is False


def test_function(run: Any) -> None:
    steps = [
        world(REFUND, CLOSE),
        {
            "id": "grade",
            "type": "env_outcome_verifier",
            "env": "env",
            "function": "agentenv_helpdesk.verify:dana_refund_checks",
        },
    ]
    out = run(steps)["by_id"]["grade"]["output"]
    by_name = {r["criterion"]: r["passed"] for r in out["rows"]}
    assert by_name["refund_amount_correct"] and by_name["ticket_closed"]
    assert by_name["customer_replied"] is False  # no public reply was made
    assert out["score"] == pytest.approx(sum(by_name.values()) / len(by_name))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("def verify(world):\n    return {'x': 1}\n", "not true/false"),
        ("def verify(world):\n    return 'yes'\n", "returned str"),
        ("def verify(world):\n    return {}\n", "no criteria"),
        ("def verify(world):\n    raise RuntimeError('boom')\n", "raised RuntimeError: boom"),
        ("def check(world):\n    return {}\n", "defines no `verify(world)`"),
        ("def verify(world):\n    return [{'criterion': 'a', 'passed': True, 'weight': -1}]\n", "positive number"),
    ],
)
def test_bad_scripts_fail_never_pass(host: Any, tmp_path: Path, body: str, message: str) -> None:
    from agentenv_testing.tasks import run_task

    (tmp_path / "v.py").write_text(body)
    task = {
        "name": "bad",
        "steps": [world(), {"id": "grade", "type": "env_outcome_verifier", "env": "env", "script": "v.py"}],
    }
    record = run_task(task, tmp_path, host=host, bundle_dir=tmp_path)
    step = next(s for s in record["steps"] if s["id"] == "grade")
    assert step["status"] == "failed" and message in step["error"]
    assert record["passed"] is False and record["score"] is None


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"env": "nope", "checks": SQL_CHECKS}, "env", "no step 'nope'"),
        ({"env": "env"}, "checks", "exactly one of"),
        ({"env": "env", "checks": SQL_CHECKS, "script": "x.py"}, "script", "exactly one of"),
        ({"env": "env", "checks": []}, "checks", "empty"),
        ({"env": "env", "function": "no_colon"}, "function", "module:function"),
        ({"env": "env", "script": "verify.txt"}, "script", ".py"),
        ({"env": "env", "checks": [{"sql": "SELECT 1", "bogus": 1}]}, "checks.0.bogus", "Extra inputs"),
        ({"env": "env", "checks": [{"sql": "SELECT 1", "weight": 0}]}, "checks.0.weight", "greater than 0"),
        (
            {"env": "env", "checks": [{"name": "a", "sql": "SELECT 1"}, {"name": "a", "sql": "SELECT 2"}]},
            "checks",
            "repeat",
        ),
    ],
)
def test_preflight(run: Any, fields: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(TaskError) as err:
        run([world(), {"id": "grade", "type": "env_outcome_verifier", **fields}])
    text = str(err.value)
    assert "step 'grade' (env_outcome_verifier)" in text and f"field `{field}`" in text and message in text
