"""SkyRL trains on agentenv tasks through agentenv's text environment (`env_class="agentenv"`).

The glue:

    register_skyrl()  # skyrl_gym.make("agentenv", …) builds AgentEnvTextEnv
    rows = skyrl_rows("support-refund", seeds=range(64))  # prompt, env_class, extras {task, seed, max_turns}

Here: skyrl_gym builds the environment from each row as SkyRL's generator does, and a script of generated text
stands in for the model (SkyRL hands the environment raw text): Hermes `<tool_call>` blocks, OpenAI JSON, an
unreadable call, and a conversation with τ²'s scripted customer. Prints the rewards and, last, a JSON summary.

Run: python examples/training/skyrl_text_env.py
"""

from __future__ import annotations

import json
from typing import Any

import skyrl_gym
from agentenv_rl.api import register_skyrl, skyrl_rows
from scripted import REFUND, cases, hermes_texts

register_skyrl()


def play(task: str, texts: list[str]) -> dict[str, Any]:
    """One episode: SkyRL's `init` with the row's prompt, then `step` with each text until done."""
    (row,) = skyrl_rows(task)
    env = skyrl_gym.make(row["env_class"], env_config={}, extras=row["extras"])
    prompt, _ = env.init(row["prompt"])
    seen = []
    for text in texts:
        out = env.step(text)
        seen.append(out["observations"])
        if out["done"]:
            return {"reward": out["reward"], "metadata": out["metadata"], "seen": seen, "metrics": env.get_metrics(),
                    "system": prompt[0]["content"]}  # fmt: skip
    raise SystemExit(f"{task}: the episode did not end")


def main() -> None:
    played = {name: play(task, hermes_texts(*script)) for name, (task, *script) in cases().items()}
    calls = [{"type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for n, a in REFUND]
    played["openai json"] = play("support-refund", [json.dumps({"tool_calls": calls}), "Done."])
    played["unreadable"] = play("support-refund", ["<tool_call>{not json</tool_call>", "Refunded."])
    for name, episode in played.items():
        print(f"{name}: reward {episode['reward']}")
    played["tau2 row"] = {"prompt": skyrl_rows("tau2-retail:0")[0]["prompt"]}
    print(json.dumps(played))


if __name__ == "__main__":
    main()
