"""ART (OpenPipe's Agent Reinforcement Trainer) gathers agentenv episodes as `art.Trajectory` groups.

The glue (inside ART's usual loop, `model` an `art.TrainableModel`):

    groups = await art.gather_trajectory_groups(
        [art.TrajectoryGroup(art_rollout(model, "support-refund") for _ in range(8))]
    )

Here: ART's own `gather_trajectory_groups` runs the rollouts of each case against `art.Model`s whose inference
endpoint is agentenv's stand-in model answering a script (scripted.py); the model's turns come back as the
`Choice`s ART trains on. Prints the rewards and, last, a JSON summary.

Run: python examples/training/art_rollouts.py   (keep openai < 3 beside openpipe-art 0.5.18)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import art
from agentenv_model_standin.api import StandInModel
from agentenv_rl.api import art_rollout
from scripted import cases, standin_turns


def summary(trajectory: art.Trajectory) -> dict[str, Any]:
    kinds = [m["role"] if isinstance(m, dict) else type(m).__name__ for m in trajectory.messages_and_choices]
    return {"reward": trajectory.reward, "metrics": trajectory.metrics, "kinds": kinds,
            "tools": len(trajectory.tools or [])}  # fmt: skip


async def main() -> None:
    played = {}
    for name, (task, calls, closing, opening) in cases().items():
        script = standin_turns(calls, closing, opening)
        with StandInModel(script) as first, StandInModel(script) as second:  # one script each: they run at once
            models = [
                art.Model(
                    name="stand-in", project="agentenv", inference_api_key="none", inference_base_url=e.openai_url
                )
                for e in (first, second)
            ]
            group = art.TrajectoryGroup(art_rollout(model, task) for model in models)
            groups = await art.gather_trajectory_groups([group])
            served = [len(first.requests), len(second.requests)]
        played[name] = {"group": [summary(t) for t in groups[0].trajectories], "served": served}
        print(f"{name}: rewards {[t['reward'] for t in played[name]['group']]}")
    print(json.dumps(played))


if __name__ == "__main__":
    asyncio.run(main())
