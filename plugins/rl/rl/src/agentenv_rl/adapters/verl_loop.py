"""verl's agent loop over any task: `AgentEnvAgentLoop`, registered as `agent_name="agentenv"`.

verl (0.9) rolls out through agent loops: for each dataset row its `AgentLoopWorker` builds the class registered
under the row's `agent_name` and awaits `run(sampling_params, **row)`, which talks to the rollout servers in
tokens (`server_manager.generate`) and returns an `AgentLoopOutput`: prompt and response token ids, the mask of
the tokens the model generated, and the trajectory's reward (`reward_score`, which the worker places on the last
response token as `rm_scores`, so no reward function runs).

Here `run` plays one episode of the row's task (`extra_info`: `task`, `seed`, `tools`, `max_turns`) in a fresh
fork of its start: the conversation opens as `first_messages` says, tokenized by verl's continuous-token builder
with the world's tools in the chat template; each generation is read by verl's tool parser for the configured
`multi_turn.format` (falling back to `assistant_message`, which also answers an unreadable `<tool_call>` with an
error) and played with `aapply_assistant`; tool results and the simulated user's replies are merged back as
context tokens (mask 0). Text without a call is the answer, or a message to the task's simulated user. The reward
is the task's verifiers' score. Each turn's new messages are tokenized alone, giving the ids verl's own rendering
gives (`agentenv_rl.adapters.verl_tokens`). `verl_rows(task, seeds)` writes the rows. verl is imported with this
module, never by `agentenv_rl.api` until it is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast
from uuid import uuid4

from agentenv_runtime import openai_tools
from pydantic import ValidationError
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
from verl.experimental.agent_loop.tool_parser import ToolParser
from verl.tools.schemas import OpenAIFunctionToolSchema

from agentenv_rl.adapters.chat import aapply_assistant, opening_messages, row_messages
from agentenv_rl.adapters.starts import afresh_episode, base_episode
from agentenv_rl.adapters.text import assistant_message
from agentenv_rl.adapters.verl_tokens import Kept, TurnRenderer
from agentenv_rl.episode import StepResult

AGENT_NAME = "agentenv"
DEFAULT_MAX_TURNS = 16
_TOOL_FORMS = Kept()
"""A start's tool list → (its OpenAI functions, verl's schemas)."""
Merged = tuple[Any, list[int], list[float] | None]
"""verl's continuous-token merge: (its `MergeResult`, the response mask, the response log-probs)."""


def verl_rows(
    task: str, seeds: Sequence[int] | None = None, *, tools: Sequence[str] | None = None, max_turns: int | None = None
) -> list[dict[str, Any]]:
    """verl dataset rows for `task` (one per seed): the prompt, `agent_name="agentenv"` and the `extra_info` the
    agent loop reads."""
    chosen: list[int | None] = list(seeds) if seeds else [None]
    rows = []
    for seed in chosen:
        episode = base_episode(task, seed, tools=tools)
        extra: dict[str, Any] = {"task": task, "seed": episode.seed}
        if tools is not None:
            extra["tools"] = list(tools)
        if max_turns is not None:
            extra["max_turns"] = max_turns
        rows.append(
            {"prompt": row_messages(episode), "agent_name": AGENT_NAME, "data_source": "agentenv", "extra_info": extra}
        )
    return rows


@register(AGENT_NAME)
class AgentEnvAgentLoop(AgentLoopBase):  # type: ignore[misc]  # verl ships no type information
    """One episode of the row's task, rolled out in tokens through verl's servers; the reward is its score."""

    incremental_tokens = True
    """Tokenize each turn's new messages alone where that gives verl's token ids (`verl_tokens.TurnRenderer`);
    False: verl renders every turn itself (the same ids, several times the CPU)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.pop("tools", None)  # verl's configured tools: an episode's tools are its world's
        super().__init__(*args, **kwargs)
        multi_turn = self.rollout_config.multi_turn
        self.tool_parser = ToolParser.get_tool_parser(multi_turn.format, self.tokenizer)
        self.max_turns = int(multi_turn.max_assistant_turns or DEFAULT_MAX_TURNS)
        self.response_length = int(self.rollout_config.response_length)
        self.turns = TurnRenderer.install(self.continuous_token_builder) if self.incremental_tokens else None

    @staticmethod
    def _tools(tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[OpenAIFunctionToolSchema] | None]:
        """An episode's tools as OpenAI functions (what the chat template renders) and as verl's schema model (for
        the parsers that read them; None when one does not fit it, an `anyOf` property has no `type`: those
        parsers then go without). Made once per start's tool list, which its forks share: the same list each
        trajectory, which is how the first prompt's tokens are found again."""
        found = _TOOL_FORMS.get(tools, "forms")
        if found is None:
            functions = openai_tools(tools)
            try:
                schemas: list[OpenAIFunctionToolSchema] | None = [
                    OpenAIFunctionToolSchema.model_validate(f) for f in functions
                ]
            except ValidationError:
                schemas = None
            found = (functions, schemas)
            _TOOL_FORMS.put(tools, "forms", found)
        return cast(tuple[list[dict[str, Any]], list[OpenAIFunctionToolSchema] | None], found)

    async def _message(self, token_ids: list[int], schemas: list[OpenAIFunctionToolSchema] | None) -> dict[str, Any]:
        """A generation as an OpenAI assistant message: verl's tool parser first, then ours."""
        content, calls = await self.tool_parser.extract_tool_calls(token_ids, schemas)
        if calls:
            return {
                "role": "assistant",
                "content": content.strip() or None,
                "tool_calls": [
                    {
                        "id": call.tool_call_id or f"call_{i}",
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for i, call in enumerate(calls)
                ],
            }
        return assistant_message(self.tokenizer.decode(token_ids, skip_special_tokens=True))  # one turn: quick

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        extra = dict(kwargs.get("extra_info") or {})
        if not extra.get("task"):
            raise ValueError('the verl dataset row needs extra_info["task"]: BUNDLE[:TASK], a bundle folder or a file')
        seed = None if extra.get("seed") is None else int(extra["seed"])
        tools = extra.get("tools")
        episode = await afresh_episode(str(extra["task"]), seed, tools=tools)
        functions, schemas = self._tools(episode.tools())
        given = kwargs.get("raw_prompt")  # a list, or a numpy array of messages out of verl's batch
        messages = opening_messages(episode, [] if given is None else [dict(m) for m in given])
        token_ids: list[int] = await self.ct_build_initial_tokens(messages, tools=functions)
        prompt_length = len(token_ids)
        mask: list[int] = []
        logprobs: list[float] = []  # kept when the servers return them (verl aligns them with the mask)
        request_id, turns, final = uuid4().hex, 0, None
        max_turns = int(extra.get("max_turns") or self.max_turns)
        while final is None and turns < max_turns and len(mask) < self.response_length:
            output = await self.server_manager.generate(
                request_id=request_id, prompt_ids=token_ids, sampling_params=sampling_params
            )
            turns += 1
            so_far = logprobs if logprobs or output.log_probs else None
            merged, mask, aligned = await self._merge_assistant(
                token_ids, output.token_ids, mask, so_far, output.log_probs or None
            )
            token_ids, logprobs = merged.token_ids, aligned or logprobs
            message = await self._message(output.token_ids, schemas)
            previous = [*messages, message]
            added, final = await aapply_assistant(episode, message)
            if final is not None or len(mask) >= self.response_length:
                break
            messages = [*previous, *added]
            merged, mask, aligned = await self._merge_context(
                previous, messages, token_ids, mask, logprobs or None, functions
            )
            token_ids, logprobs = merged.token_ids, (aligned or []) if logprobs else logprobs
        truncated = final is None
        if final is None:  # out of turns or tokens: graded as it stands
            final = await episode.astep({"answer": ""})
        return self._output(token_ids, prompt_length, mask, logprobs, final, turns, truncated)

    async def _merge_assistant(
        self,
        token_ids: list[int],
        generated: list[int],
        mask: list[int],
        logprobs: list[float] | None,
        generated_logprobs: list[float] | None,
    ) -> Merged:
        """verl's `ct_merge_assistant_token`; on this loop when the turn renderer is installed (then each merge
        takes microseconds, less than handing it to a thread and back, which verl does for its full renders)."""
        if self.turns is None:
            return cast(
                Merged,
                await self.ct_merge_assistant_token(
                    token_ids, generated, mask, logprobs, assistant_logprobs=generated_logprobs
                ),
            )
        builder = self.continuous_token_builder
        merged = builder.merge_assistant_tokens(token_ids, generated)
        aligned = builder.align_response_metadata(merged, mask, logprobs, assistant_logprobs=generated_logprobs)
        return merged, *aligned

    async def _merge_context(
        self,
        previous: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        token_ids: list[int],
        mask: list[int],
        logprobs: list[float] | None,
        functions: list[dict[str, Any]],
    ) -> Merged:
        """verl's `ct_merge_context_msg`, on this loop when the turn renderer is installed (as `_merge_assistant`)."""
        if self.turns is None:
            merging = self.ct_merge_context_msg(previous, messages, token_ids, mask, logprobs, tools=functions)
            return cast(Merged, await merging)
        builder = self.continuous_token_builder
        merged = builder.merge_context_tokens(previous, messages, token_ids, tools=functions)
        return merged, *builder.align_response_metadata(merged, mask, logprobs)

    def _output(
        self,
        token_ids: list[int],
        prompt_length: int,
        mask: list[int],
        logprobs: list[float],
        final: StepResult,
        turns: int,
        truncated: bool,
    ) -> AgentLoopOutput:
        response_ids = token_ids[len(token_ids) - len(mask) :] if mask else []
        limit = self.response_length
        return AgentLoopOutput(
            prompt_ids=token_ids[: len(token_ids) - len(mask)] if mask else token_ids[:prompt_length],
            response_ids=response_ids[:limit],
            response_mask=mask[:limit],
            response_logprobs=logprobs[:limit] if logprobs else None,
            reward_score=float(final.reward),
            num_turns=2 * turns + 1,
            metrics={},
            extra_fields={
                "agentenv": {
                    "score": final.info.get("score"),
                    "passed": bool(final.info.get("passed")),
                    "truncated": truncated,
                    "trajectory_digest": final.info.get("trajectory_digest"),
                    "turns": turns,
                }
            },
        )
