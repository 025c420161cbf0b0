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

def play(texts, task="support-refund"):
    (row,) = skyrl_rows(task)
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
gold = ["<tool_call>" + json.dumps({"name": n, "arguments": a}) + "</tool_call>" for n, a in json.loads(sys.argv[2])]
ask, wrap_up = sys.argv[3], sys.argv[4]
print(json.dumps({
    "hermes": play(hermes + ["Refunded 89.99, closed the ticket and emailed Dana."]),
    "openai": play(openai + ["Done."]),
    "wrong": play(broken + hermes[:1] + ["Refunded."]),
    "tau2": play([ask, *gold, wrap_up], "tau2-retail:0"),
    "tau2 wrong": play([ask, *gold[:2], wrap_up], "tau2-retail:0"),
    "tau2 row": skyrl_rows("tau2-retail:0")[0]["prompt"],
}))
"""


def test_skyrl_gym_plays_the_task_from_raw_generated_text(
    framework_python: Callable[..., Path], run_in: Callable[..., dict[str, Any]]
) -> None:
    python = framework_python("skyrl", "skyrl-gym==0.4.0")
    seen = run_in(python, SKYRL, json.dumps(SOLUTION), json.dumps(_tau2_gold()), ASK, WRAP_UP)
    hermes, openai, wrong = seen["hermes"], seen["openai"], seen["wrong"]
    assert hermes["reward"] == 1.0 and hermes["metadata"]["passed"] is True and hermes["metrics"]["passed"] == 1.0
    assert all(json.loads(obs[0]["content"])["ok"] for obs in hermes["seen"][:3])
    assert openai["reward"] == 1.0 and len(openai["seen"][0]) == 3  # three calls in one generation
    assert 0.0 <= wrong["reward"] < 1.0
    unread = json.loads(wrong["seen"][0][0]["content"])
    assert unread["ok"] is False and "could not be read" in unread["error"]["message"]
    # a simulated user: the text went to the customer, whose reply came back as a user message; its stop graded
    talked = seen["tau2"]
    assert talked["reward"] == 1.0 and talked["seen"][0] == [
        {"role": "user", "content": "You are Yusuf Rossi in zip code 19122."}
    ]
    assert seen["tau2 wrong"]["reward"] == 0.0
    system, user = seen["tau2 row"]  # the policy as the system prompt; the customer's scenario is never shown
    assert system["role"] == "system" and "Retail agent policy" in system["content"] and user["content"] == ""


TRL_GRPO = """
import json, sys, tempfile
import torch
from datasets import Dataset
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
from trl import GRPOConfig, GRPOTrainer
from trl.chat_template_utils import qwen3_chat_template
from agentenv_rl.api import trl_environment, trl_rows

TOOLS = ["get_ticket", "issue_refund", "close_ticket", "send_email"]
Environment = trl_environment("support-refund", tools=TOOLS, short_descriptions=True)
rows = trl_rows("support-refund") * 2

# A tokenizer trained here on the chat template's own rendering of the prompt (no download), and a tiny model.
specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>",
            "</tool_response>", "<think>", "</think>"]
raw = Tokenizer(models.BPE())
raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
raw.decoder = decoders.ByteLevel()
bootstrap = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()))
probe = Environment()
sample = bootstrap.apply_chat_template(rows[0]["prompt"], tools=[getattr(probe, t) for t in TOOLS],
                                       chat_template=qwen3_chat_template, tokenize=False, add_generation_prompt=True)
raw.train_from_iterator([sample] * 4, trainers.BpeTrainer(vocab_size=1200, special_tokens=specials,
                                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                    padding_side="left")
tokenizer.chat_template = qwen3_chat_template
torch.manual_seed(0)
model = Qwen3ForCausalLM(Qwen3Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                     num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                                     max_position_embeddings=4096, pad_token_id=tokenizer.pad_token_id,
                                     eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=True))
rewards_seen = []
original = Environment.get_reward
def get_reward(self):
    reward = original(self)
    rewards_seen.append(reward)
    return reward
Environment.get_reward = get_reward
args = GRPOConfig(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=2, num_generations=2, max_steps=1,
                  max_completion_length=8, learning_rate=1e-2, use_cpu=True, report_to=[], logging_steps=1,
                  save_strategy="no", bf16=False, max_tool_calling_iterations=1)
trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=Dataset.from_list(rows),
                      environment_factory=Environment)
trainer.train()
trainer_rewards = list(rewards_seen)
logged = [entry for entry in trainer.state.log_history if "reward" in entry]
# The same class in TRL's own tool loop pieces: its tool schema and its response parser on a model's text.
from transformers.utils import get_json_schema
schema = get_json_schema(Environment.issue_refund)
solved, wrong = Environment(), Environment()
solved.reset(**rows[0]); wrong.reset(**rows[0])
for name, arguments in json.loads(sys.argv[1]):
    text = "<tool_call>\\n" + json.dumps({"name": name, "arguments": arguments}) + "\\n</tool_call><|im_end|>"
    for call in tokenizer.parse_response(text, prefix="")["tool_calls"]:
        getattr(solved, call["function"]["name"])(**call["function"]["arguments"])
print(json.dumps({"rewards_seen": trainer_rewards, "logged": logged, "schema": schema,
                  "solved": solved.get_reward(), "wrong": wrong.get_reward(), "steps": trainer.state.global_step}))
"""


def test_a_real_trl_grpo_step_on_cpu_rewards_from_the_world(
    framework_python: Callable[..., Path], run_in: Callable[..., dict[str, Any]]
) -> None:
    python = framework_python("trl", "trl==1.16.0", "datasets>=3")
    seen = run_in(python, TRL_GRPO, json.dumps(SOLUTION), timeout=1200)
    assert seen["steps"] == 1
    # get_reward graded each of the step's two rollouts; an untrained model's 8 tokens solve nothing
    assert len(seen["rewards_seen"]) == 2 and all(0.0 <= r < 1.0 for r in seen["rewards_seen"])
    (logged,) = seen["logged"]  # TRL logged our environment's reward under its class name, with the step's loss
    assert logged["rewards/AgentEnv_support_refund/mean"] == sum(seen["rewards_seen"]) / 2 and "loss" in logged
    parameters = seen["schema"]["function"]["parameters"]
    properties = parameters["properties"]
    assert properties["amount"]["type"] == "number" and parameters["required"] == [
        "order_id",
        "amount",
        "reason",
    ]
    assert seen["solved"] == 1.0 and seen["wrong"] < 1.0


ART = """
import asyncio, json, sys
import art
from agentenv_rl.api import art_rollout

def summary(trajectory):
    assert isinstance(trajectory, art.Trajectory)
    kinds = [m["role"] if isinstance(m, dict) else type(m).__name__ for m in trajectory.messages_and_choices]
    return {"reward": trajectory.reward, "metrics": trajectory.metrics, "kinds": kinds,
            "tools": len(trajectory.tools or [])}

async def main(solved_url, wrong_url):
    def model(url):
        return art.Model(name="stand-in", project="agentenv", inference_api_key="none", inference_base_url=url)
    # ART's own gathering runs the rollout coroutines of a group
    group = art.TrajectoryGroup([art_rollout(model(solved_url), "support-refund")])
    groups = await art.gather_trajectory_groups([group])
    wrong = await art_rollout(model(wrong_url), "support-refund")
    print(json.dumps({"solved": summary(groups[0].trajectories[0]), "wrong": summary(wrong), "groups": len(groups)}))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_art_rollouts_come_back_as_art_trajectories(
    framework_python: Callable[..., Path], run_in: Callable[..., dict[str, Any]]
) -> None:
    from agentenv_model_standin.api import StandInModel

    solved = [{"tool_calls": [{"tool": name, "arguments": args}]} for name, args in SOLUTION] + [{"text": "Done."}]
    wrong = [{"tool_calls": [{"tool": SOLUTION[0][0], "arguments": SOLUTION[0][1]}]}, {"text": "Refunded."}]
    # openpipe-art 0.5.18 allows openai>=2.14, but hands openai 3 (httpx2 inside) an httpx.Timeout, which fails
    # on the first request ("unsupported operand type(s) for +: 'float' and 'Timeout'"): openai stays below 3.
    python = framework_python("art", "openpipe-art==0.5.18", "openai>=2.14,<3")
    with StandInModel(solved) as right, StandInModel(wrong) as partial:
        seen = run_in(python, ART, right.openai_url, partial.openai_url)
        assert len(right.requests) == 4 and len(partial.requests) == 2
    assert seen["solved"]["reward"] == 1.0 and seen["solved"]["metrics"]["passed"] is True
    assert seen["solved"]["kinds"] == ["user"] + ["Choice", "tool"] * 3 + ["Choice"]  # trainable turns are Choices
    assert seen["solved"]["tools"] > 40
    assert 0.0 <= seen["wrong"]["reward"] < 1.0 and seen["groups"] == 1


def _vf_eval(python: Path, base_url: str, output: Path) -> dict[str, Any]:
    """`vf-eval agentenv-vf` (verifiers' own CLI) on support-refund against a model at `base_url`: the trace."""
    import os
    import subprocess

    from agentenv_testing.installs import AGENTENV_VARS

    env = {k: v for k, v in os.environ.items() if k not in AGENTENV_VARS and k != "VIRTUAL_ENV"}
    env |= {"STANDIN_KEY": "none", "PATH": f"{python.parent}:{env.get('PATH', '')}"}
    command = [str(python.parent / "vf-eval"), "agentenv-vf", "--env.taskset.bundle", "support-refund"]
    command += ["-m", "stand-in", "--client.base-url", base_url, "--client.api-key-var", "STANDIN_KEY", "-r", "1"]
    command += ["--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess", "--no-push"]
    command += ["-o", str(output)]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    (traces,) = output.glob("*/traces.jsonl")
    (episode,) = [json.loads(line) for line in traces.read_text().splitlines()]
    assert episode["ok"] and not episode["errors"], episode["errors"]
    (trace,) = episode["traces"]
    result: dict[str, Any] = trace
    return result


def test_vf_eval_plays_the_task_as_a_verifiers_v1_taskset(
    framework_python: Callable[..., Path], tmp_path: Path
) -> None:
    from agentenv_model_standin.api import StandInModel

    solved = [{"tool_calls": [{"tool": name, "arguments": args}]} for name, args in SOLUTION] + [{"text": "Done."}]
    wrong = [{"tool_calls": [{"tool": SOLUTION[0][0], "arguments": SOLUTION[0][1]}]}, {"text": "Refunded."}]
    python = framework_python("verifiers", "verifiers==0.4.0")
    with StandInModel(solved) as right, StandInModel(wrong) as partial:
        good = _vf_eval(python, right.openai_url, tmp_path / "solved")
        bad = _vf_eval(python, partial.openai_url, tmp_path / "wrong")
        assert len(right.requests) == 4 and len(partial.requests) == 2
        offered = {tool["function"]["name"] for tool in right.requests[0].body["tools"]}
    assert good["rewards"]["task_score"]["score"] == 1.0 and good["info"]["agentenv"]["passed"] is True
    assert [n["message"]["role"] for n in good["nodes"]] == ["user"] + ["assistant", "tool"] * 3 + ["assistant"]
    assert {"issue_refund", "close_ticket", "send_email"} <= offered and len(offered) == 47  # the role's tools
    assert 0.0 <= bad["rewards"]["task_score"]["score"] < 1.0 and bad["info"]["agentenv"]["passed"] is False


AGENT_LIGHTNING = """
import json, os, socket, subprocess, sys, time, urllib.request
from agentlightning.verl.agl_rollout_manager import AglRolloutManager
from agentenv_rl.adapters.agent_lightning import AGENT_CLASS, ENV_MAP, agent_lightning_rows

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

port = free_port()
url = f"http://127.0.0.1:{port}"
hydra = ["hydra.run.dir=.", "hydra.output_subdir=null"]
logs = {name: open(f"{name}.log", "w") for name in ("server", "controller")}  # the agents' output goes to the latter
server = subprocess.Popen([sys.executable, "-m", "agentlightning.server", f"port={port}", "host=127.0.0.1",
                           "default_proxy.model_name=stand-in", *hydra],
                          stdout=logs["server"], stderr=subprocess.STDOUT)
controller = subprocess.Popen([sys.executable, "-m", "agentlightning.controller", "runner_type=local",
                               f"agl_server.url={url}", "local_runner.poll_interval=0.2",
                               "local_runner.maximum_size=1", *hydra],  # one at a time: one scripted model
                              stdout=logs["controller"], stderr=subprocess.STDOUT)
try:
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(url + "/healthz", timeout=2)
            break
        except OSError:
            assert time.monotonic() < deadline and server.poll() is None, "the Agent Lightning server did not start"
            time.sleep(0.2)
    # The trainer's own rollout manager (what Agent Lightning's verl trainer drives each step with)
    manager = AglRolloutManager(agl_base_url=url, agl_key="", model="stand-in", step=0, train_rollout_n=2,
                                poll_interval_seconds=0.2, rollout_timeout_seconds=300,
                                local_agent_class=AGENT_CLASS, local_env_map=ENV_MAP)
    seen = {}
    for name, (model_url, task) in json.loads(sys.argv[1]).items():
        manager.delete_model()
        manager.register_model([model_url])
        (row,) = agent_lightning_rows(task)
        completed = manager.enqueue_and_wait_until_completed({k: [v] for k, v in row.items()}, is_train=True)
        seen[name] = [{
            "state": str(c.rollout_state), "error": c.error_message, "reward": c.final_reward,
            "events": [e["event_type"] for e in c.events],
            "agentenv": [e["data"] for e in c.events if e["event_type"] == "agentenv"],
            "requests": [len(e["data"]["request"]["messages"]) for e in c.events if e["event_type"] == "model_request"],
        } for c in completed]
        if any(c.error_message for c in completed):
            print(open("controller.log").read()[-6000:], file=sys.stderr)
    print(json.dumps(seen))
finally:
    for process in (controller, server):
        process.terminate()
        process.wait(30)
"""


def _turns(calls: list[tuple[str, dict[str, Any]]], text: str, opening: str | None = None) -> list[dict[str, Any]]:
    """A stand-in model's script: an opening message (to a simulated user), one tool call a turn, a closing text."""
    said = [{"text": opening}] if opening else []
    return [*said, *({"tool_calls": [{"tool": name, "arguments": args}]} for name, args in calls), {"text": text}]


def _tau2_gold() -> list[tuple[str, dict[str, Any]]]:
    from agentenv_tau2.api import retail_task

    return [(action.name, dict(action.arguments)) for action in retail_task("0").gold_actions]


ASK = "Could I have your name and zip code, please?"
WRAP_UP = "Both items are exchanged. Is there anything else I can help you with?"


def test_agent_lightning_runs_the_agent_class_behind_its_capturing_proxy(
    framework_python: Callable[..., Path], run_in: Callable[..., dict[str, Any]]
) -> None:
    """Agent Lightning v1's own server (gateway proxy, store), its local rollout controller and its trainer's
    rollout manager run `AgentLightningAgent` for each rollout; the stand-in model answers through the proxy."""
    from agentenv_model_standin.api import StandInModel

    gold = _tau2_gold()
    # agentlightning 1.0 needs Python 3.12; numpy is its rollout manager's import (the verl extra brings it)
    python = framework_python("agentlightning", "agentlightning==1.0.2", "numpy", python="3.12")
    with (
        StandInModel(_turns(SOLUTION, "Refunded 89.99, closed the ticket and emailed Dana.") * 2) as solved,
        StandInModel(_turns(SOLUTION[:1], "Refunded.") * 2) as wrong,
        StandInModel(_turns(gold, WRAP_UP, ASK) * 2) as talked,
        StandInModel(_turns(gold[:2], WRAP_UP, ASK) * 2) as cut_short,
    ):
        plan = {
            "solved": (solved.openai_url, "support-refund"),
            "wrong": (wrong.openai_url, "support-refund"),
            "tau2 solved": (talked.openai_url, "tau2-retail:0"),
            "tau2 wrong": (cut_short.openai_url, "tau2-retail:0"),
        }
        seen = run_in(python, AGENT_LIGHTNING, json.dumps(plan), timeout=1200)
    for name, rollouts in seen.items():
        assert len(rollouts) == 2 and all(r["state"] == "succeeded" for r in rollouts), (name, rollouts)
        for played in rollouts:  # the proxy captured every model request; the reward event is the agent's
            assert played["events"].count("model_request") == len(played["requests"]) and "reward" in played["events"]
    assert len(solved.model_requests) == 8 and len(talked.model_requests) == 2 * (len(gold) + 2)
    assert [r["reward"] for r in seen["solved"]] == [1.0, 1.0]
    assert all(r["agentenv"][0]["passed"] and r["agentenv"][0]["turns"] == 4 for r in seen["solved"])
    assert all(0.0 <= r["reward"] < 1.0 for r in seen["wrong"])
    # the simulated user: the agent's texts went to the customer, whose stop ended and graded the episode
    assert [r["reward"] for r in seen["tau2 solved"]] == [1.0, 1.0]
    first = seen["tau2 solved"][0]["requests"]
    assert first[0] == 2 and first[1] == 4  # system policy + the customer's opening; then its reply to ASK
    assert all(r["reward"] == 0.0 for r in seen["tau2 wrong"])


VERL = """
import asyncio, json, sys, tempfile
from pathlib import Path
import numpy as np, torch, verl
from hydra import compose, initialize_config_dir
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.protocol import DataProto
from verl.workers.rollout.replica import TokenOutput
from agentenv_rl.api import verl_rows

# A ChatML template that renders tools and Hermes <tool_call> blocks (what Qwen-family models are trained on).
TEMPLATE = (
    "{%- if messages[0].role == 'system' or tools %}<|im_start|>system\\n"
    "{%- if messages[0].role == 'system' %}{{ messages[0].content }}\\n\\n{% endif %}"
    "{%- if tools %}<tools>{% for t in tools %}\\n{{ t | tojson }}{% endfor %}\\n</tools>{% endif %}<|im_end|>\\n"
    "{%- endif %}"
    "{%- for m in messages %}{%- if m.role == 'system' %}"
    "{%- elif m.role == 'assistant' %}<|im_start|>assistant\\n{{ m.content or '' }}"
    "{%- for c in m.tool_calls or [] %}<tool_call>\\n{\\"name\\": \\"{{ c.function.name }}\\", "
    "\\"arguments\\": {{ c.function.arguments }}}\\n</tool_call>{%- endfor %}<|im_end|>\\n"
    "{%- elif m.role == 'tool' %}<|im_start|>user\\n<tool_response>\\n{{ m.content }}\\n</tool_response><|im_end|>\\n"
    "{%- else %}<|im_start|>{{ m.role }}\\n{{ m.content }}<|im_end|>\\n{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\\n{% endif %}"
)
plan = json.loads(sys.argv[1])
def texts(calls, closing, opening=None):
    said = [opening] if opening else []
    calls = ["<tool_call>\\n" + json.dumps({"name": n, "arguments": a}) + "\\n</tool_call>" for n, a in calls]
    return said + calls + [closing]
scripts = {name: texts(*case["script"]) for name, case in plan.items()}

# A tokenizer trained here on what it will see (no download), and a tiny Qwen3 config (verl reads it; no weights).
raw = Tokenizer(models.BPE())
raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
raw.decoder = decoders.ByteLevel()
corpus = [t for s in scripts.values() for t in s] * 4
raw.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=1000, special_tokens=["<|endoftext|>", "<|im_start|>",
                        "<|im_end|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>")
tokenizer.chat_template = TEMPLATE
model_dir = tempfile.mkdtemp()
tokenizer.save_pretrained(model_dir)
Qwen3Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
            num_attention_heads=2, num_key_value_heads=1, head_dim=16, pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id, architectures=["Qwen3ForCausalLM"]).save_pretrained(model_dir)

# verl's own trainer config (its hydra defaults), pointed at that model
with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer/config"), version_base=None):
    config = compose(config_name="ppo_trainer", overrides=[
        f"actor_rollout_ref.model.path={model_dir}", "actor_rollout_ref.rollout.name=vllm",
        "actor_rollout_ref.rollout.prompt_length=32768", "actor_rollout_ref.rollout.response_length=32768",
        "actor_rollout_ref.rollout.calculate_log_probs=True",
    ])

class ScriptedServer:
    # What a rollout server answers in tokens: the next text of the trajectory's script (verl keeps one request
    # id per trajectory), then the end-of-turn token, with log-probs as vLLM returns them.
    def __init__(self):
        self.script, self.served, self.prompts = [], {}, []
    async def generate(self, *, request_id, prompt_ids, sampling_params, **_):
        turn = self.served.get(request_id, 0)
        self.served[request_id] = turn + 1
        self.prompts.append(tokenizer.decode(prompt_ids))
        ids = tokenizer.encode(self.script[turn], add_special_tokens=False) + [tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.25] * len(ids))

server = ScriptedServer()
worker = AgentLoopWorker(config, server)  # the worker verl's AgentLoopManager runs (here in this process)
seen = {}
for name, case in plan.items():
    server.script = scripts[name]
    rows = verl_rows(case["task"], tools=case["tools"]) * 2  # two trajectories of one row, rolled out together
    columns = {key: np.array([row[key] for row in rows], dtype=object) for key in ("agent_name", "extra_info")}
    columns["raw_prompt"] = np.array([row["prompt"] for row in rows], dtype=object)
    batch = DataProto.from_dict(tensors={"index": torch.arange(len(rows))}, non_tensors=columns,
                                meta_info={"global_steps": 1})
    out = asyncio.run(worker.generate_sequences(batch))
    mask, scores = out.batch["response_mask"], out.batch["rm_scores"]
    seen[name] = {
        "rewards": scores.sum(-1).tolist(),
        "generated": mask.sum(-1).tolist(),
        "context": (out.batch["attention_mask"][:, out.batch["prompts"].size(1):].sum(-1) - mask.sum(-1)).tolist(),
        "logprobs": out.batch["rollout_log_probs"][0][mask[0].bool()].unique().tolist(),
        "agentenv": [e["agentenv"] for e in out.non_tensor_batch["agentenv"]] if "agentenv" in out.non_tensor_batch
                    else [],
        "first_prompt": server.prompts[-len(scripts[name]) * 2],
    }
print(json.dumps(seen))
"""


def test_verl_agent_loop_rolls_out_through_verls_agent_loop_worker(
    framework_python: Callable[..., Path], run_in: Callable[..., dict[str, Any]]
) -> None:
    """verl 0.9's own `AgentLoopWorker` (its trainer config, tokenizer wiring, continuous-token merging, tool parser,
    padding and reward placement) runs `AgentEnvAgentLoop` for each row; the rollout server is a stand-in answering
    a script in tokens (no GPU, no vLLM here)."""
    gold = _tau2_gold()
    tools = ["issue_refund", "close_ticket", "send_email", "get_ticket"]
    gold_tools = sorted({name for name, _ in gold})
    plan = {
        "solved": {"task": "support-refund", "tools": tools, "script": [SOLUTION, "Refunded 89.99."]},
        "wrong": {"task": "support-refund", "tools": tools, "script": [SOLUTION[:1], "Refunded."]},
        "tau2 solved": {"task": "tau2-retail:0", "tools": gold_tools, "script": [gold, WRAP_UP, ASK]},
        "tau2 wrong": {"task": "tau2-retail:0", "tools": gold_tools, "script": [gold[:2], WRAP_UP, ASK]},
    }
    # verl's core extra: its rollout modules import uvicorn, fastapi and cachetools, which plain `verl` leaves out
    python = framework_python("verl", "verl[verl-core]==0.9.1")
    seen = run_in(python, VERL, json.dumps(plan), timeout=1500)
    assert seen["solved"]["rewards"] == [1.0, 1.0] and all(e["passed"] for e in seen["solved"]["agentenv"])
    assert all(0.0 <= r < 1.0 for r in seen["wrong"]["rewards"])
    assert seen["tau2 solved"]["rewards"] == [1.0, 1.0] and seen["tau2 wrong"]["rewards"] == [0.0, 0.0]
    solved = seen["solved"]
    assert all(g > 0 for g in solved["generated"]) and all(c > 0 for c in solved["context"])  # tool results: mask 0
    assert solved["logprobs"] == [-0.25]  # the server's log-probs, aligned with the generated tokens only
    assert "<tools>" in solved["first_prompt"] and '"name": "close_ticket"' in solved["first_prompt"]
    assert '"name": "lookup_account"' not in solved["first_prompt"]  # trimmed to the row's tools
    opening = seen["tau2 solved"]["first_prompt"]
    assert "Retail agent policy" in opening and "#W2378156" in opening  # the policy, then the customer's opening
    assert "wish to exchange the mechanical keyboard" not in opening  # never the customer's own scenario
