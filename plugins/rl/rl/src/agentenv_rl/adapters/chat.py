"""Episodes driven by chat messages: an assistant message's tool calls become steps, its text the final answer.

`openai_tools` and `apply_assistant` are public (`agentenv_rl.api`): every adapter, and a user's own loop, goes
through them.

Trainers hold conversations in OpenAI's chat format; these helpers are the one translation between that format
and episode actions, shared by the rollout function, the verifiers-style environment and the TRL reward.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentenv_rl.episode import Episode, StepResult
from agentenv_rl.split import EpisodeError


def openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """MCP-style tool descriptions (an episode's observation) as OpenAI function tools."""
    return [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t.get("description", ""), "parameters": t["inputSchema"]},
        }
        for t in tools
    ]


def _arguments(call: Mapping[str, Any]) -> dict[str, Any]:
    raw = call.get("function", {}).get("arguments") or "{}"
    parsed = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(parsed, dict):
        raise ValueError("tool call arguments are a JSON object")
    return parsed


def apply_assistant(episode: Episode, message: Mapping[str, Any]) -> tuple[list[dict[str, Any]], StepResult | None]:
    """Play one assistant message: (tool messages for its calls, the final result if it ended the episode).

    A message without tool calls is the final answer. A call whose arguments are not JSON is answered with an
    error tool message (and changes nothing), as the world answers bad arguments."""
    calls = message.get("tool_calls") or []
    if not calls:
        return [], episode.step({"answer": str(message.get("content") or "")})
    replies: list[dict[str, Any]] = []
    for call in calls:
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
