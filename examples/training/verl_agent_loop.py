"""verl rolls out agentenv tasks through agentenv's agent loop (registered as `agent_name="agentenv"`).

The glue: import the loop once in the rollout workers (verl registers it), and write the rows:

    import agentenv_rl.adapters.verl_loop  # registers agent_name "agentenv" (or: agent.agent_loop_config_path)
    rows = verl_rows("support-refund", seeds=range(64), tools=[...])  # prompt, agent_name, extra_info per row
    pandas.DataFrame(rows).to_parquet("train.parquet")  # data.train_files=train.parquet

Here, without GPUs or vLLM: verl's own `AgentLoopWorker`, built from verl's own trainer config (its tokenizer
wiring, continuous-token merging, tool parser, padding and reward placement), runs two trajectories of each case;
the rollout server is a stand-in answering the script (scripted.py) in tokens of a tokenizer trained here, over
a tiny Qwen3 config (verl reads it; no weights). Each case runs again with every turn rendered by verl itself
(`AgentEnvAgentLoop.incremental_tokens = False`): the batches must be the same. Prints each case's rewards and,
last, a JSON summary.

Run (verl 0.9 needs Python < 3.13): python examples/training/verl_agent_loop.py
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
import verl
from agentenv_rl.adapters import verl_tokens
from agentenv_rl.adapters.verl_loop import AgentEnvAgentLoop
from agentenv_rl.api import verl_rows
from hydra import compose, initialize_config_dir
from scripted import REFUND_TOOLS, cases, hermes_texts
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.protocol import DataProto
from verl.workers.rollout.replica import TokenOutput

# A ChatML template that renders tools and Hermes <tool_call> blocks (the format of Qwen-family models).
TEMPLATE = (
    "{%- if messages[0].role == 'system' or tools %}<|im_start|>system\n"
    "{%- if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}"
    "{%- if tools %}<tools>{% for t in tools %}\n{{ t | tojson }}{% endfor %}\n</tools>{% endif %}<|im_end|>\n"
    "{%- endif %}"
    "{%- for m in messages %}{%- if m.role == 'system' %}"
    "{%- elif m.role == 'assistant' %}<|im_start|>assistant\n{{ m.content or '' }}"
    '{%- for c in m.tool_calls or [] %}<tool_call>\n{"name": "{{ c.function.name }}", '
    '"arguments": {{ c.function.arguments }}}\n</tool_call>{%- endfor %}<|im_end|>\n'
    "{%- elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{%- else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_model(corpus: list[str]) -> tuple[PreTrainedTokenizerFast, str]:
    """A tokenizer trained on `corpus` (no download) and a tiny Qwen3 config, saved where verl loads a model."""
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    raw.train_from_iterator(
        corpus, trainers.BpeTrainer(vocab_size=1000, special_tokens=specials, initial_alphabet=alphabet)
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = TEMPLATE
    folder = tempfile.mkdtemp(prefix="verl-tiny-")
    tokenizer.save_pretrained(folder)
    Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        architectures=["Qwen3ForCausalLM"],
    ).save_pretrained(folder)  # fmt: skip
    return tokenizer, folder


class ScriptedServer:
    """What a rollout server answers in tokens: the next text of the trajectory's script (verl keeps one request id
    per trajectory), then the end-of-turn token, with log-probs as vLLM returns them."""

    def __init__(self, tokenizer: PreTrainedTokenizerFast) -> None:
        self.tokenizer, self.script, self.served, self.prompts = tokenizer, [""], {}, []

    async def generate(self, *, request_id: str, prompt_ids: list[int], sampling_params: Any, **_: Any) -> TokenOutput:
        turn = self.served.get(request_id, 0)
        self.served[request_id] = turn + 1
        self.prompts.append(prompt_ids)
        ids = [*self.tokenizer.encode(self.script[turn], add_special_tokens=False), self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.25] * len(ids))


def build_worker(corpus: list[str], max_length: int = 32768) -> tuple[AgentLoopWorker, ScriptedServer]:
    """verl's `AgentLoopWorker` from verl's own trainer config, over a tiny model, with the scripted server
    (`max_length`: the rollout's prompt and response lengths, which verl pads every trajectory to)."""
    tokenizer, model = tiny_model(corpus)
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer/config"), version_base=None):
        config = compose(
            config_name="ppo_trainer",
            overrides=[
                f"actor_rollout_ref.model.path={model}",
                "actor_rollout_ref.rollout.name=vllm",
                f"actor_rollout_ref.rollout.prompt_length={max_length}",
                f"actor_rollout_ref.rollout.response_length={max_length}",
                "actor_rollout_ref.rollout.calculate_log_probs=True",
            ],
        )
    server = ScriptedServer(tokenizer)
    return AgentLoopWorker(config, server), server  # the worker verl's AgentLoopManager runs, here in process


def roll(worker: AgentLoopWorker, task: str, tools: list[str] | None, n: int) -> DataProto:
    """`n` trajectories of one row of `task`, rolled out together by the worker (a batch, as in training)."""
    rows = verl_rows(task, tools=tools) * n
    columns = {key: np.empty(len(rows), dtype=object) for key in ("agent_name", "extra_info", "raw_prompt")}
    for index, row in enumerate(rows):  # one object a row (np.array would make a list of messages a 2-D array)
        columns["agent_name"][index], columns["extra_info"][index] = row["agent_name"], row["extra_info"]
        columns["raw_prompt"][index] = row["prompt"]
    batch = DataProto.from_dict(
        tensors={"index": torch.arange(len(rows))}, non_tensors=columns, meta_info={"global_steps": 1}
    )
    return asyncio.run(worker.generate_sequences(batch))


def same_batches(one: DataProto, other: DataProto) -> bool:
    """Whether two rollouts gave the same tensors (prompts, responses, masks, rewards, log-probs) and fields."""
    keys = set(one.batch.keys())
    if keys != set(other.batch.keys()) or set(one.non_tensor_batch) != set(other.non_tensor_batch):
        return False
    tensors = all(torch.equal(one.batch[key], other.batch[key]) for key in keys)
    return tensors and all(
        [repr(v) for v in one.non_tensor_batch[key]] == [repr(v) for v in other.non_tensor_batch[key]]
        for key in one.non_tensor_batch
    )


def main() -> None:
    scripts = {name: (task, hermes_texts(*script)) for name, (task, *script) in cases().items()}
    worker, server = build_worker([text for _, texts in scripts.values() for text in texts] * 4)
    summary = {}
    for name, (task, texts) in scripts.items():
        server.script = texts
        tools = REFUND_TOOLS if task == "support-refund" else None  # τ²'s role keeps its 17
        out = roll(worker, task, tools, 2)
        first_prompt = server.tokenizer.decode(server.prompts[-len(texts) * 2])
        AgentEnvAgentLoop.incremental_tokens = False  # the same rollout, every turn rendered by verl itself
        try:
            verls = roll(worker, task, tools, 2)
        finally:
            AgentEnvAgentLoop.incremental_tokens = True
        mask = out.batch["response_mask"]
        rewards = out.batch["rm_scores"].sum(-1).tolist()
        summary[name] = {
            "rewards": rewards,
            "generated": mask.sum(-1).tolist(),
            "context": (out.batch["attention_mask"][:, out.batch["prompts"].size(1) :].sum(-1) - mask.sum(-1)).tolist(),
            "logprobs": out.batch["rollout_log_probs"][0][mask[0].bool()].unique().tolist(),
            "agentenv": [dict(fields) for fields in out.non_tensor_batch.get("agentenv", [])],
            "first_prompt": first_prompt,
            "same as verl's rendering": same_batches(out, verls),
        }
        print(f"{name}: rewards {rewards}")
    summary["turn tokens"] = {**verl_tokens.counts(), "cuts": cuts(server.tokenizer)}
    print(json.dumps(summary))


def cuts(tokenizer: PreTrainedTokenizerFast) -> dict[str, bool]:
    """Where the turn renderer may cut a text of this tokenizer (`verl_tokens`), and whether tokenizing the two
    halves alone gives the whole text's tokens there."""
    cut = verl_tokens.Cut(tokenizer)
    texts = {
        "at <|im_start|>": ("<|im_start|>system\nhi<|im_end|>\n", "<|im_start|>user\nok<|im_end|>\n"),
        "inside a word": ("<|im_start|>assistant\nRefun", "ded 89.99.<|im_end|>\n"),
        "inside <|im_end|>": ("<|im_start|>user\nok<|im_", "end|>\n<|im_start|>assistant\n"),
    }
    found = {}
    for name, (before, after) in texts.items():
        ids = tokenizer.encode(before + after, add_special_tokens=False)
        apart = tokenizer.encode(before, add_special_tokens=False) + tokenizer.encode(after, add_special_tokens=False)
        found[f"{name}: safe"], found[f"{name}: same ids"] = cut.safe(before, after), ids == apart
    return found


if __name__ == "__main__":
    main()
