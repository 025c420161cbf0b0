"""verifiers (0.4, `verifiers.v1`) evaluates and trains on agentenv tasks as a Taskset: `agentenv-vf`.

The glue is none: the wheel carries the taskset id `agentenv-vf`; pick the task on the command line.

    vf-eval agentenv-vf --env.taskset.bundle support-refund -m MODEL --client.base-url URL

Here: verifiers' own `vf-eval` runs it against agentenv's stand-in model answering a script (scripted.py), once
solved and once not (null harness, subprocess runtime: the world's tools are served to the rollout by verifiers
as an MCP server). Prints the rewards and, last, a JSON summary.

Run: python examples/training/verifiers_vf_eval.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentenv_model_standin.api import StandInModel
from scripted import cases, standin_turns


def vf_eval(base_url: str, task: str, output: Path) -> dict[str, Any]:
    """`vf-eval agentenv-vf` on `task` against the model at `base_url`: the rollout's trace."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTENV_") and k != "VIRTUAL_ENV"}
    env |= {"STANDIN_KEY": "none", "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}"}
    command = [str(Path(sys.executable).parent / "vf-eval"), "agentenv-vf", "--env.taskset.bundle", task]
    command += ["-m", "stand-in", "--client.base-url", base_url, "--client.api-key-var", "STANDIN_KEY", "-r", "1"]
    command += ["--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess", "--no-push"]
    command += ["-o", str(output)]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        raise SystemExit((proc.stdout + proc.stderr)[-4000:])
    (traces,) = output.glob("*/traces.jsonl")
    (episode,) = [json.loads(line) for line in traces.read_text().splitlines()]
    if not episode["ok"] or episode["errors"]:
        raise SystemExit(f"vf-eval reported errors: {episode['errors']}")
    (trace,) = episode["traces"]
    result: dict[str, Any] = trace
    return result


def main() -> None:
    summary = {}
    scratch = Path(tempfile.mkdtemp(prefix="vf-eval-"))
    for name in ("solved", "wrong"):
        task, calls, closing, opening = cases()[name]
        with StandInModel(standin_turns(calls, closing, opening)) as model:
            trace = vf_eval(model.openai_url, task, scratch / name.replace(" ", "-"))
            offered = sorted(tool["function"]["name"] for tool in model.requests[0].body["tools"])
            summary[name] = {
                "reward": trace["rewards"]["task_score"]["score"],
                "agentenv": trace["info"]["agentenv"],
                "roles": [node["message"]["role"] for node in trace["nodes"]],
                "served": len(model.requests),
                "offered": offered,
            }
        print(f"{name}: reward {summary[name]['reward']}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
