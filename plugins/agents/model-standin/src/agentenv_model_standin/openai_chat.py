"""OpenAI Chat Completions (`POST /v1/chat/completions`), streaming or not: the `llm` kind, most SDKs."""

from __future__ import annotations

import json
import time
from typing import Any

from agentenv_model_standin.openai_responses import error
from agentenv_model_standin.wire import Offered, Part, Rendered, Usage, json_reply, new_id, sse

name = "openai-chat"
__all__ = ["error", "name", "offered", "render", "search"]


def offered(body: dict[str, Any]) -> list[Offered]:
    tools = body.get("tools") or []
    return [
        Offered(str(tool["function"]["name"]))
        for tool in tools
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict) and "name" in tool["function"]
    ]


def search(body: dict[str, Any], suffixes: list[str]) -> Part | None:
    """Chat clients have no tool search: every tool is in `tools`."""
    return None


def render(parts: list[Part], body: dict[str, Any], usage: Usage) -> Rendered:
    text = "".join(part.text or "" for part in parts if part.tool is None) or None
    calls = [
        {
            "id": f"call_{part.call_id}",
            "type": "function",
            "function": {"name": part.tool.name, "arguments": json.dumps(part.arguments)},
        }
        for part in parts
        if part.tool is not None
    ]
    finish = "tool_calls" if calls else "stop"
    counts = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
    head = {"id": new_id("chatcmpl-"), "created": int(time.time()), "model": body.get("model", "stand-in")}
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return json_reply({**head, "object": "chat.completion", "choices": [choice], "usage": counts})
    chunk = {**head, "object": "chat.completion.chunk"}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if text:
        deltas.append({"content": text})
    deltas += [{"tool_calls": [{"index": index, **call}]} for index, call in enumerate(calls)]
    events: list[tuple[str | None, Any]] = [
        (None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}) for delta in deltas
    ]
    events.append((None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append((None, {**chunk, "choices": [], "usage": counts}))
    events.append((None, "[DONE]"))
    return sse(events)
