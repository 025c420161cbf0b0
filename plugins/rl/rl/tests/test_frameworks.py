"""Each trainer's own package, in its own venv (uv, shared cache), runs its example in examples/training/: the
framework's own loop drives support-refund to reward 1.0 with the solution and below 1.0 with a wrong one, and
tau2-retail:0 (a simulated customer) likewise. The model is a script of what a model would write (no weights can
be downloaded here), except TRL's GRPO step, which runs a tiny model built in the example."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]  # a cold venv of the framework's package, then its loop

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "training"
Example = Callable[..., dict[str, Any]]


@pytest.fixture
def example(framework_python: Callable[..., Path], run_in: Callable[..., dict[str, Any]]) -> Example:
    """`example(file, *requirements, python=…)`: run examples/training/FILE with the framework venv's interpreter;
    its last line of output is JSON, returned parsed."""

    def run(name: str, *requirements: str, python: str = "3.11") -> dict[str, Any]:
        venv = framework_python(Path(name).stem, *requirements, python=python)
        return run_in(venv, EXAMPLES / name, timeout=1800)

    return run


def test_skyrl_gym_plays_tasks_from_raw_generated_text(example: Example) -> None:
    seen = example("skyrl_text_env.py", "skyrl-gym==0.4.0")
    solved = seen["solved"]
    assert solved["reward"] == 1.0 and solved["metadata"]["passed"] is True and solved["metrics"]["passed"] == 1.0
    assert all(json.loads(obs[0]["content"])["ok"] for obs in solved["seen"][:3])
    assert "<tool_call>" in solved["system"]  # the tools, offered in the Hermes format
    assert seen["openai json"]["reward"] == 1.0 and len(seen["openai json"]["seen"][0]) == 3  # three calls at once
    assert 0.0 <= seen["wrong"]["reward"] < 1.0
    unread = json.loads(seen["unreadable"]["seen"][0][0]["content"])
    assert unread["ok"] is False and "could not be read" in unread["error"]["message"]
    # a simulated user: the text went to the customer, whose reply came back as a user message; its stop graded
    talked = seen["tau2 solved"]
    assert talked["reward"] == 1.0 and talked["seen"][0] == [
        {"role": "user", "content": "You are Yusuf Rossi in zip code 19122."}
    ]
    assert "Retail agent policy" in talked["system"] and seen["tau2 wrong"]["reward"] == 0.0
    system, user = seen["tau2 row"]["prompt"]  # the policy is the system prompt; the scenario is never shown
    assert system["role"] == "system" and user == {"role": "user", "content": ""}


def test_a_real_trl_grpo_step_on_cpu_rewards_from_the_world(example: Example) -> None:
    seen = example("trl_grpo.py", "trl==1.16.0", "datasets>=3")
    assert seen["steps"] == 1
    # get_reward graded each of the step's two rollouts; an untrained model's 8 tokens solve nothing
    assert len(seen["rewards_seen"]) == 2 and all(0.0 <= r < 1.0 for r in seen["rewards_seen"])
    (logged,) = seen["logged"]  # TRL logged our environment's reward under its class name, with the step's loss
    assert logged["rewards/AgentEnv_support_refund/mean"] == sum(seen["rewards_seen"]) / 2 and "loss" in logged
    parameters = seen["schema"]["function"]["parameters"]
    assert parameters["properties"]["amount"]["type"] == "number"
    assert parameters["required"] == ["order_id", "amount", "reason"]
    assert seen["solved"] == 1.0 and seen["wrong"] < 1.0
    talked = seen["tau2 solved"]  # reset gave the customer's opening; message_user talked to the customer
    assert talked["reward"] == 1.0 and "#W2378156" in talked["opening"] and talked["stop"] == "###STOP###"
    assert talked["reply"] == "You are Yusuf Rossi in zip code 19122." and talked["row"][-1]["content"] == ""
    assert seen["tau2 wrong"]["reward"] == 0.0


def test_art_rollouts_come_back_as_art_trajectories(example: Example) -> None:
    # openpipe-art 0.5.18 allows openai>=2.14, but hands openai 3 (httpx2 inside) an httpx.Timeout, which fails
    # on the first request ("unsupported operand type(s) for +: 'float' and 'Timeout'"): openai stays below 3.
    seen = example("art_rollouts.py", "openpipe-art==0.5.18", "openai>=2.14,<3")
    solved = seen["solved"]
    assert [t["reward"] for t in solved["group"]] == [1.0, 1.0] and solved["served"] == [4, 4]
    assert solved["group"][0]["metrics"]["passed"] is True and solved["group"][0]["tools"] > 40
    assert solved["group"][0]["kinds"] == ["user"] + ["Choice", "tool"] * 3 + ["Choice"]  # trainable turns: Choices
    assert all(0.0 <= t["reward"] < 1.0 for t in seen["wrong"]["group"])
    talked = seen["tau2 solved"]["group"][0]  # the system policy, the customer's opening, its replies as users
    assert talked["reward"] == 1.0 and talked["kinds"][:4] == ["system", "user", "Choice", "user"]
    assert [t["reward"] for t in seen["tau2 wrong"]["group"]] == [0.0, 0.0]


def test_vf_eval_plays_the_task_as_a_verifiers_v1_taskset(example: Example) -> None:
    seen = example("verifiers_vf_eval.py", "verifiers==0.4.0")
    solved, wrong = seen["solved"], seen["wrong"]
    assert solved["reward"] == 1.0 and solved["agentenv"]["passed"] is True and solved["served"] == 4
    assert solved["roles"] == ["user"] + ["assistant", "tool"] * 3 + ["assistant"]
    assert {"issue_refund", "close_ticket", "send_email"} <= set(solved["offered"]) and len(solved["offered"]) == 50
    assert 0.0 <= wrong["reward"] < 1.0 and wrong["agentenv"]["passed"] is False and wrong["served"] == 2


def test_agent_lightning_runs_the_agent_class_behind_its_capturing_proxy(example: Example) -> None:
    """Agent Lightning v1's own server (gateway proxy, store), its local rollout controller and its trainer's
    rollout manager run `AgentLightningAgent` for each rollout; the stand-in model answers through the proxy."""
    # agentlightning 1.0 needs Python 3.12; numpy is its rollout manager's import (its verl extra brings it)
    seen = example("agent_lightning_agent.py", "agentlightning==1.0.2", "numpy", python="3.12")
    for name, case in seen.items():
        assert all(r["state"] == "succeeded" for r in case["rollouts"]) and len(case["rollouts"]) == 2, (name, case)
        for played in case["rollouts"]:  # the proxy captured every model request; the reward event is the agent's
            assert played["events"].count("model_request") == len(played["requests"]) and "reward" in played["events"]
    solved = seen["solved"]
    assert [r["reward"] for r in solved["rollouts"]] == [1.0, 1.0] and solved["served"] == 8
    assert all(r["agentenv"][0]["passed"] and r["agentenv"][0]["turns"] == 4 for r in solved["rollouts"])
    assert all(0.0 <= r["reward"] < 1.0 for r in seen["wrong"]["rollouts"])
    # the simulated user: the agent's texts went to the customer, whose stop ended and graded the episode
    talked = seen["tau2 solved"]
    assert [r["reward"] for r in talked["rollouts"]] == [1.0, 1.0]
    assert talked["rollouts"][0]["requests"][:2] == [2, 4]  # the policy + the opening; then the customer's reply
    assert [r["reward"] for r in seen["tau2 wrong"]["rollouts"]] == [0.0, 0.0]


def test_verl_agent_loop_rolls_out_through_verls_agent_loop_worker(example: Example) -> None:
    """verl 0.9's own `AgentLoopWorker` (its trainer config, tokenizer wiring, continuous-token merging, tool parser,
    padding and reward placement) runs `AgentEnvAgentLoop` for each row; the rollout server is a stand-in answering
    a script in tokens (no GPU, no vLLM here)."""
    # verl's core extra: its rollout modules import uvicorn, fastapi and cachetools, which plain `verl` leaves out
    seen = example("verl_agent_loop.py", "verl[verl-core]==0.9.1")
    solved = seen["solved"]
    assert solved["rewards"] == [1.0, 1.0] and all(e["passed"] for e in solved["agentenv"])
    assert all(0.0 <= r < 1.0 for r in seen["wrong"]["rewards"])
    assert seen["tau2 solved"]["rewards"] == [1.0, 1.0] and seen["tau2 wrong"]["rewards"] == [0.0, 0.0]
    assert all(g > 0 for g in solved["generated"]) and all(c > 0 for c in solved["context"])  # tool results: mask 0
    assert solved["logprobs"] == [-0.25]  # the server's log-probs, aligned with the generated tokens only
    assert "<tools>" in solved["first_prompt"] and '"name": "close_ticket"' in solved["first_prompt"]
    assert '"name": "lookup_account"' not in solved["first_prompt"]  # trimmed to the row's tools
    opening = seen["tau2 solved"]["first_prompt"]
    assert "Retail agent policy" in opening and "#W2378156" in opening  # the policy, then the customer's opening
    # each turn's messages tokenized alone: every case's batch equals the one verl's own rendering of every turn
    # gives (tool results, errors, the customer's replies), and the fast path ran for every turn
    turns = seen.pop("turn tokens")
    assert all(case["same as verl's rendering"] for case in seen.values())
    assert turns["incremental"] >= 20 and turns["fallbacks"] == 0
    cuts = turns["cuts"]  # the cut rule on this tokenizer: safe only where the ids do not change
    assert cuts["at <|im_start|>: safe"] and cuts["at <|im_start|>: same ids"]
    assert not cuts["inside a word: same ids"] and not cuts["inside a word: safe"]
    assert not cuts["inside <|im_end|>: same ids"] and not cuts["inside <|im_end|>: safe"]
