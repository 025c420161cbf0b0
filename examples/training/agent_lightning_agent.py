"""Agent Lightning (v1) trains agentenv tasks with no agent code: its rollout controller runs agentenv's agent class.

The glue, in Agent Lightning's trainer config (hydra) and dataset:

    agentlightning.local.agent_class: agentenv_rl.adapters.agent_lightning:AgentLightningAgent
    agentlightning.local.env_map: {AGENTENV_TASK: input.task, AGENTENV_SEED: input.seed}
    rows = agent_lightning_rows("support-refund", seeds=range(64))  # the dataset: {"task", "seed"} rows

Here, without GPUs: Agent Lightning's own server (its gateway proxy, which captures every model request, and
its store), its local rollout controller, and its trainer's rollout manager (`AglRolloutManager`, what its
verl trainer calls each step) run two rollouts of each case; the model behind the proxy is agentenv's stand-in
answering a script (scripted.py). Prints each rollout's reward and, last, a JSON summary.

Run (agentlightning 1.0 needs Python 3.12): python examples/training/agent_lightning_agent.py
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from agentenv_model_standin.api import StandInModel
from agentenv_rl.api import agent_lightning_rows
from agentlightning.verl.agl_rollout_manager import AglRolloutManager
from scripted import cases, standin_turns

# The glue: what Agent Lightning's trainer config says (agentlightning.local.*)
AGENT_CLASS = "agentenv_rl.adapters.agent_lightning:AgentLightningAgent"
ENV_MAP = {"AGENTENV_TASK": "input.task", "AGENTENV_SEED": "input.seed"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start(url: str, port: int) -> list[subprocess.Popen[bytes]]:
    """Agent Lightning's server and local controller (one rollout at a time: one scripted model)."""
    hydra = ["hydra.run.dir=.", "hydra.output_subdir=null"]
    logs = {name: open(f"{name}.log", "w") for name in ("server", "controller")}  # noqa: SIM115 (the processes')
    server = [sys.executable, "-m", "agentlightning.server", f"port={port}", "host=127.0.0.1"]
    server += ["default_proxy.model_name=stand-in", *hydra]
    controller = [sys.executable, "-m", "agentlightning.controller", "runner_type=local", f"agl_server.url={url}"]
    controller += ["local_runner.poll_interval=0.2", "local_runner.maximum_size=1", *hydra]
    started = [
        subprocess.Popen(command, stdout=logs[name], stderr=subprocess.STDOUT)
        for name, command in (("server", server), ("controller", controller))
    ]
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(url + "/healthz", timeout=2)
            return started
        except OSError:
            if time.monotonic() > deadline or started[0].poll() is not None:
                raise SystemExit("the Agent Lightning server did not start (see server.log)") from None
            time.sleep(0.2)


def main() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    processes = start(url, port)
    manager = AglRolloutManager(
        agl_base_url=url, agl_key="", model="stand-in", step=0, train_rollout_n=2, poll_interval_seconds=0.2,
        rollout_timeout_seconds=300, local_agent_class=AGENT_CLASS, local_env_map=ENV_MAP,
    )  # fmt: skip
    summary = {}
    try:
        for name, (task, calls, closing, opening) in cases().items():
            with StandInModel(standin_turns(calls, closing, opening) * 2) as model:
                manager.delete_model()
                manager.register_model([model.openai_url])
                (row,) = agent_lightning_rows(task)
                completed = manager.enqueue_and_wait_until_completed({k: [v] for k, v in row.items()}, is_train=True)
                served = len(model.model_requests)
            summary[name] = {
                "served": served,
                "rollouts": [
                    {
                        "state": str(c.rollout_state),
                        "error": c.error_message,
                        "reward": c.final_reward,
                        "events": [e["event_type"] for e in c.events],
                        "agentenv": [e["data"]["agentenv"] for e in c.events if e["event_type"] == "reward"],
                        "requests": [
                            len(e["data"]["request"]["messages"])
                            for e in c.events
                            if e["event_type"] == "model_request"
                        ],
                    }
                    for c in completed
                ],
            }
            print(f"{name}: rewards {[c.final_reward for c in completed]}")
            if any(c.error_message for c in completed):
                print(Path("controller.log").read_text()[-6000:], file=sys.stderr)
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(30)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
