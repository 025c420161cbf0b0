"""Episodes driven by chat messages: an assistant message's tool calls become steps, its text the final answer.

`openai_tools`, `apply_assistant` (and its async twin `aapply_assistant`) and `first_messages` are public
(`agentenv_rl.api`): every adapter, and a user's own loop, goes through them. On a task with a simulated user an
assistant message without tool calls is said to the user, whose reply comes back as a user message.

Trainers hold conversations in OpenAI's chat format; these helpers are the one translation between that format
and episode actions, shared by the rollout function, the verifiers-style environment and the TRL reward.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentenv_rl.episode import Episode, StepResult
from agentenv_rl.split import EpisodeError


def _arguments(call: Mapping[str, Any]) -> dict[str, Any]:
    raw = call.get("function", {}).get("arguments") or "{}"
    parsed = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(parsed, dict):
        raise ValueError("tool call arguments are a JSON object")
    return parsed


def first_messages(episode: Episode) -> list[dict[str, Any]]:
    """The conversation a reset episode starts from: the agent's system prompt (if the task sets one), then the
    opening user message (the task's prompt, or the simulated user's opening)."""
    system = episode.system_prompt()
    opening = {"role": "user", "content": episode.opening()}
    return [{"role": "system", "content": system}, opening] if system else [opening]


def opening_messages(episode: Episode, prompt: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The conversation a reset episode starts from, given a dataset row's prompt: the row's messages, unless it
    has no user message or the task has a simulated user (whose opening is this conversation's): then the
    episode's own `first_messages`."""
    given = [dict(m) for m in prompt or []]
    if episode.has_user or not any(m.get("role") != "system" for m in given):
        return first_messages(episode)
    return given


def row_messages(episode: Episode) -> list[dict[str, Any]]:
    """The prompt a dataset row carries for `episode`'s task (reset or not): the system prompt, then the task's
    prompt; with a simulated user an empty user message instead, since the task's prompt is then the user's
    scenario (never the agent's to see) and the opening comes with each conversation."""
    system = episode.system_prompt()
    user = {"role": "user", "content": "" if episode.has_user else episode.prompt()}
    return [{"role": "system", "content": system}, user] if system else [user]


def text_action(episode: Episode, message: Mapping[str, Any]) -> dict[str, Any]:
    """The action for an assistant message without tool calls: a message to the simulated user on a task that
    has one (its reply comes back as a user message), else the final answer."""
    text = str(message.get("content") or "")
    return {"say": text} if episode.has_user else {"answer": text}


def text_replies(result: StepResult) -> list[dict[str, Any]]:
    """The messages a text step adds to the conversation: the simulated user's reply, if it was one."""
    if result.observation.get("type") == "user_message":
        return [{"role": "user", "content": str(result.observation.get("text", ""))}]
    return []


def _ended(result: StepResult) -> StepResult | None:
    return result if result.terminated or result.truncated else None


def apply_assistant(episode: Episode, message: Mapping[str, Any]) -> tuple[list[dict[str, Any]], StepResult | None]:
    """Play one assistant message: (the messages it adds: tool results or the simulated user's reply, the final
    result if it ended the episode).

    A message without tool calls is the final answer, or on a task with a simulated user a message to that user
    (the episode ends when the user does). A call whose arguments are not JSON is answered with an error tool
    message (and changes nothing), as the world answers bad arguments."""
    if not message.get("tool_calls"):
        result = episode.step(text_action(episode, message))
        return text_replies(result), _ended(result)
    return apply_tool_calls(episode, message)


async def aapply_assistant(
    episode: Episode, message: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], StepResult | None]:
    """`apply_assistant` from async code: the answer's grading and the simulated user's reply run on the caller's
    event loop (tool calls take microseconds and stay synchronous)."""
    if not message.get("tool_calls"):
        result = await episode.astep(text_action(episode, message))
        return text_replies(result), _ended(result)
    return apply_tool_calls(episode, message)


def apply_tool_calls(episode: Episode, message: Mapping[str, Any]) -> tuple[list[dict[str, Any]], StepResult | None]:
    """Play an assistant message's tool calls: their tool messages, and the result if one ended the episode."""
    replies: list[dict[str, Any]] = []
    for call in message.get("tool_calls") or []:
        call_id = str(call.get("id") or f"call_{episode.step_count}")
        try:
            name = call["function"]["name"]
            if not isinstance(name, str) or not name:
                raise ValueError(
                    f"this tool call could not be read: {call['function'].get('arguments')!r}; write "
                    '{"name": TOOL, "arguments": {...}}'
                )
            action = {"tool": name, "arguments": _arguments(call)}
            result = episode.step(action)
        except (KeyError, ValueError, EpisodeError) as exc:
            if episode.done:
                raise
            error = {"ok": False, "error": {"code": "invalid_tool_call", "message": str(exc)}}
            replies.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(error)})
            continue
        outcome = {k: result.observation[k] for k in ("ok", "result", "error") if k in result.observation}
        replies.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(outcome, default=str)})
        if result.terminated or result.truncated:
            return replies, result
    return replies, None
