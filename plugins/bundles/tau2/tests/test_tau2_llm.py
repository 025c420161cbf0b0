"""An `llm` agent and the `llm` customer complete a tau2-retail task against the stand-in chat-completions server
(agentenv-model-standin: no model runs here; the server answers each request from a script, in order)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentenv_model_standin.api import StandInModel
from agentenv_tau2.api import retail_task, retail_tasks
from agentenv_tau2.usersim import STOP


def script_for(task_id: str) -> list[dict[str, object]]:
    """The customer opens, the agent makes the gold calls one request each and answers, the customer stops."""
    task = retail_task(task_id)
    calls = [{"tool_calls": [{"tool": a.name, "arguments": a.arguments}]} for a in task.gold_actions]
    return [
        {"text": "Hi, I'm Yusuf Rossi, zip 19122. I want to exchange two items of order #W2378156."},
        *calls,
        {"text": "Both items are exchanged. Is there anything else I can help you with?"},
        {"text": STOP},
    ]


def run_with_model(
    model: StandInModel, tmp_path: Path, task: str, agent: str, user: str
) -> subprocess.CompletedProcess[str]:
    """`agentenv run tau2-retail --task TASK --agent AGENT` with [model] on the stand-in and the customer `user`."""
    config = tmp_path / "config.toml"
    config.write_text(
        f'[model]\nbase_url = "{model.openai_url}"\nmodel = "stand-in"\n\n[plugins.agentenv-tau2]\nuser = "{user}"\n',
        encoding="utf-8",
    )
    agentenv = str(Path(sys.executable).with_name("agentenv"))
    return subprocess.run(
        [agentenv, "run", "tau2-retail", "--task", task, "--agent", agent, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "AGENTENV_CONFIG": str(config)},
    )


def test_llm_agent_and_llm_customer_complete_task_0(tmp_path: Path) -> None:
    with StandInModel(script_for("0")) as model:
        done = run_with_model(model, tmp_path, "0", "llm", "llm")
        requests = model.model_requests
    assert done.returncode == 0, done.stdout + done.stderr
    assert [(t["name"], t["score"]) for t in json.loads(done.stdout)["tasks"]] == [("0", 1.0)]
    customer = [r for r in requests if not r.tool_names]
    agent = [r for r in requests if r.tool_names]
    assert len(customer) == 2 and len(agent) == len(retail_task("0").gold_actions) + 1
    system = customer[0].body["messages"][0]["content"]
    assert "###STOP###" in system and "#W2378156" in system  # the customer's prompt: τ²'s conventions + scenario
    assert customer[0].body["messages"][1]["content"] == "Hi! How can I help you today?"
    assert "retail agent" in agent[0].body["messages"][0]["content"].lower()  # the agent's system prompt: the policy


def test_a_configured_model_judges_the_nl_assertions(tmp_path: Path) -> None:
    task = next(t for t in retail_tasks().values() if t.evaluation_criteria and t.evaluation_criteria.nl_assertions)
    assert task.evaluation_criteria is not None and task.evaluation_criteria.nl_assertions
    outcomes = task.evaluation_criteria.nl_assertions
    for met, score in ((True, 1.0), (False, 0.0)):
        answer = {"results": [{"expectedOutcome": o, "reasoning": "checked", "metExpectation": met} for o in outcomes]}
        with StandInModel([{"text": json.dumps(answer)}]) as model:
            done = run_with_model(model, tmp_path, task.id, "tau2-gold", "scripted")
            judged = model.model_requests
        assert [(t["name"], t["score"]) for t in json.loads(done.stdout)["tasks"]] == [(task.id, score)], done.stderr
        assert len(judged) == 1 and all(o in judged[0].body["messages"][1]["content"] for o in outcomes)
