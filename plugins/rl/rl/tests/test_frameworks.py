"""Each trainer's own package, in its own venv (uv, shared cache), drives support-refund through its own loop:
reward 1.0 for the solution, below 1.0 for a wrong one. The model is a script of what a model would write
(no weights can be downloaded here), except TRL's GRPO step, which runs a tiny model built in the test."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

SOLUTION = [
    ("issue_refund", {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged"}),
    ("close_ticket", {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}),
    ("send_email", {"to": ["dana.kim@example.com"], "subject": "Refund", "body": "We refunded 89.99 for the boots."}),
]

SKYRL = """
import json, sys
import skyrl_gym
from agentenv_rl.api import register_skyrl, skyrl_rows

register_skyrl()
calls = json.loads(sys.argv[1])

def play(texts):
    (row,) = skyrl_rows("support-refund")
    env = skyrl_gym.make(row["env_class"], env_config={}, extras=row["extras"])
    prompt, _ = env.init(row["prompt"])
    assert prompt[0]["role"] == "system" and "<tool_call>" in prompt[0]["content"], prompt[0]
    seen = []
    for text in texts:
        out = env.step(text)
        seen.append(out["observations"])
        if out["done"]:
            return {"reward": out["reward"], "metadata": out["metadata"], "seen": seen, "metrics": env.get_metrics()}
    raise AssertionError("the episode did not end")

hermes = ["<think>Refund first.</think>\\n<tool_call>\\n" + json.dumps({"name": n, "arguments": a}) + "\\n</tool_call>"
          for n, a in calls]
openai = [json.dumps({"tool_calls": [{"type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                                     for n, a in calls]})]
broken = ["<tool_call>{not json</tool_call>"]
print(json.dumps({
    "hermes": play(hermes + ["Refunded 89.99, closed the ticket and emailed Dana."]),
    "openai": play(openai + ["Done."]),
    "wrong": play(broken + hermes[:1] + ["Refunded."]),
}))
"""


def test_skyrl_gym_plays_the_task_from_raw_generated_text(
    framework_python: Callable[..., Path], run_in: Callable[..., dict[str, Any]]
) -> None:
    python = framework_python("skyrl", "skyrl-gym==0.4.0")
    seen = run_in(python, SKYRL, json.dumps(SOLUTION))
    hermes, openai, wrong = seen["hermes"], seen["openai"], seen["wrong"]
    assert hermes["reward"] == 1.0 and hermes["metadata"]["passed"] is True and hermes["metrics"]["passed"] == 1.0
    assert all(json.loads(obs[0]["content"])["ok"] for obs in hermes["seen"][:3])
    assert openai["reward"] == 1.0 and len(openai["seen"][0]) == 3  # three calls in one generation
    assert 0.0 <= wrong["reward"] < 1.0
    unread = json.loads(wrong["seen"][0][0]["content"])
    assert unread["ok"] is False and "could not be read" in unread["error"]["message"]
