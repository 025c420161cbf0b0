"""TRL trains on agentenv tasks with `GRPOTrainer(environment_factory=…)`: the role's tools become the class's methods.

The glue:

    Environment = trl_environment("support-refund", tools=[...], short_descriptions=True)
    trainer = GRPOTrainer(model=..., args=..., train_dataset=Dataset.from_list(trl_rows("support-refund") * 64),
                          environment_factory=Environment)

Here, on CPU without downloads: one real `GRPOTrainer` step on a tiny Qwen3 model built here (a tokenizer trained
on the chat template's own rendering, TRL's Qwen3 template), rewarded by the environment's `get_reward`; then TRL's
response parser reads a model's `<tool_call>` text into calls on the class (solved and not), and the class of a
task with a simulated user (`message_user`, τ²'s scripted customer) is played. Prints the rewards and, last, a
JSON summary.

Run: python examples/training/trl_grpo.py
"""

from __future__ import annotations

import json
import tempfile
from typing import Any

import torch
from agentenv_rl.api import trl_environment, trl_rows
from datasets import Dataset
from scripted import ASK, REFUND, REFUND_TOOLS, WRAP_UP, tau2_gold
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
from transformers.utils import get_json_schema
from trl import GRPOConfig, GRPOTrainer
from trl.chat_template_utils import qwen3_chat_template

Environment = trl_environment("support-refund", tools=REFUND_TOOLS, short_descriptions=True)
ROWS = trl_rows("support-refund") * 2

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>",
            "</tool_response>", "<think>", "</think>"]  # fmt: skip


def tiny_model() -> tuple[PreTrainedTokenizerFast, Qwen3ForCausalLM]:
    """A tokenizer trained on the chat template's rendering of the prompt with the tools, and a tiny Qwen3."""
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    bootstrap = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()))
    probe = Environment()
    sample = bootstrap.apply_chat_template(
        ROWS[0]["prompt"], tools=[getattr(probe, t) for t in REFUND_TOOLS], chat_template=qwen3_chat_template,
        tokenize=False, add_generation_prompt=True,
    )  # fmt: skip
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    raw.train_from_iterator(
        [sample] * 4, trainers.BpeTrainer(vocab_size=1200, special_tokens=SPECIALS, initial_alphabet=alphabet)
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    tokenizer.chat_template = qwen3_chat_template
    torch.manual_seed(0)
    config = Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, max_position_embeddings=4096, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=True,
    )  # fmt: skip
    return tokenizer, Qwen3ForCausalLM(config)


def grpo_step(tokenizer: PreTrainedTokenizerFast, model: Qwen3ForCausalLM) -> dict[str, Any]:
    """One GRPO step; the rewards `get_reward` gave and what TRL logged."""
    seen: list[float] = []
    original = Environment.get_reward

    def get_reward(self: Any) -> float:
        reward = original(self)
        seen.append(reward)
        return reward

    Environment.get_reward = get_reward  # type: ignore[method-assign]  # watch the rewards the trainer asks for
    args = GRPOConfig(
        output_dir=tempfile.mkdtemp(), per_device_train_batch_size=2, num_generations=2, max_steps=1,
        max_completion_length=8, learning_rate=1e-2, use_cpu=True, report_to=[], logging_steps=1,
        save_strategy="no", bf16=False, max_tool_calling_iterations=1,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, args=args, train_dataset=Dataset.from_list(ROWS),
        environment_factory=Environment,
    )  # fmt: skip
    trainer.train()
    Environment.get_reward = original  # type: ignore[method-assign]
    logged = [entry for entry in trainer.state.log_history if "reward" in entry]
    return {"rewards_seen": seen, "logged": logged, "steps": trainer.state.global_step}


def parsed_play(tokenizer: PreTrainedTokenizerFast, calls: list[tuple[str, dict[str, Any]]]) -> float:
    """A model's `<tool_call>` text read by TRL's response parser into calls on a fresh instance; its reward."""
    environment = Environment()
    environment.reset(**ROWS[0])
    for name, arguments in calls:
        text = "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call><|im_end|>"
        for call in tokenizer.parse_response(text, prefix="")["tool_calls"]:
            getattr(environment, call["function"]["name"])(**call["function"]["arguments"])
    return environment.get_reward()


def conversation(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """tau2-retail:0's class: the customer's opening from `reset`, `message_user` to talk, the world's tools."""
    Customer = trl_environment("tau2-retail:0")
    environment = Customer()
    (row,) = trl_rows("tau2-retail:0")
    opening = environment.reset(**row)
    reply = environment.message_user(message=ASK)
    for name, arguments in calls:
        getattr(environment, name)(**arguments)
    stop = environment.message_user(message=WRAP_UP)
    return {"row": row["prompt"], "opening": opening, "reply": reply, "stop": stop, "reward": environment.get_reward()}


def main() -> None:
    tokenizer, model = tiny_model()
    step = grpo_step(tokenizer, model)
    gold = tau2_gold()
    summary = {
        **step,
        "schema": get_json_schema(Environment.issue_refund),
        "solved": parsed_play(tokenizer, REFUND),
        "wrong": parsed_play(tokenizer, REFUND[:1]),
        "tau2 solved": conversation(gold),
        "tau2 wrong": conversation(gold[:2]),
    }
    print(f"GRPO step {step['steps']}: rewards {step['rewards_seen']}")
    for name in ("solved", "wrong"):
        print(f"{name}: reward {summary[name]}")
    for name in ("tau2 solved", "tau2 wrong"):
        print(f"{name}: reward {summary[name]['reward']}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
