"""An `llm` agent and the `llm` customer complete a tau2-retail task against the stand-in chat-completions server
(agentenv-model-standin: no model runs here; the server answers each request from a script, in order)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentenv_model_standin.api import StandInModel
from agentenv_tau2.api import retail_task
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


def test_llm_agent_and_llm_customer_complete_task_0(tmp_path: Path) -> None:
    with StandInModel(script_for("0")) as model:
        config = tmp_path / "config.toml"
        config.write_text(
            f'[model]\nbase_url = "{model.openai_url}"\nmodel = "stand-in"\n\n[plugins.agentenv-tau2]\nuser = "llm"\n',
            encoding="utf-8",
        )
        done = subprocess.run(
            [
                str(Path(sys.executable).with_name("agentenv")),
                "run",
                "tau2-retail",
                "--task",
                "0",
                "--agent",
                "llm",
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            cwd=tmp_path,
            env={**os.environ, "AGENTENV_CONFIG": str(config)},
        )
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
