"""OpenAI Responses (`POST /v1/responses`), streaming or not, as Codex and the `openai` SDK read it.

Codex offers MCP tools inside a `namespace` item, and a call must name that namespace back. With a model
slug it knows, Codex defers them behind a client-side `tool_search` tool; `search` answers that step.
"""

from __future__ import annotations

import json
import time
from typing import Any

from agentenv_model_standin.wire import Offered, Part, Rendered, Usage, json_reply, new_id, sse

name = "openai-responses"


def offered(body: dict[str, Any]) -> list[Offered]:
    tools: list[Offered] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            tools += [Offered(str(inner["name"]), str(tool["name"])) for inner in tool.get("tools") or []]
        elif "name" in tool:
            tools.append(Offered(str(tool["name"])))
    return tools


def search(body: dict[str, Any], suffixes: list[str]) -> Part | None:
    types = {tool.get("type") for tool in body.get("tools") or [] if isinstance(tool, dict)}
    if "tool_search" not in types:
        return None
    return Part(tool=Offered("tool_search"), arguments={"query": " ".join(suffixes), "limit": 8}, search=True)


def _item(part: Part) -> dict[str, Any]:
    if part.tool is None:
        return {
            "type": "message",
            "id": new_id("msg_"),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": part.text or "", "annotations": []}],
        }
    if part.search:
        return {
            "type": "tool_search_call",
            "id": new_id("ts_"),
            "call_id": f"call_{part.call_id}",
            "execution": "client",
            "status": "completed",
            "arguments": part.arguments,
        }
    item = {
        "type": "function_call",
        "id": new_id("fc_"),
        "call_id": f"call_{part.call_id}",
        "name": part.tool.name,
        "arguments": json.dumps(part.arguments),
        "status": "completed",
    }
    if part.tool.namespace:
        item["namespace"] = part.tool.namespace
    return item


def render(parts: list[Part], body: dict[str, Any], usage: Usage) -> Rendered:
    items = [_item(part) for part in parts]
    response: dict[str, Any] = {
        "id": new_id("resp_"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model", "stand-in"),
        "output": items,
        "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": [],
        "usage": {
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.input_tokens + usage.output_tokens,
        },
    }
    if not body.get("stream"):
        return json_reply(response)
    opening = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": opening},
        {"type": "response.in_progress", "response": opening},
    ]
    for index, item in enumerate(items):
        events += _item_events(index, item)
    events.append({"type": "response.completed", "response": response})
    return sse([(event["type"], {**event, "sequence_number": number}) for number, event in enumerate(events)])


def _item_events(index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    """The added/delta/done events of one output item, the ones the `openai` SDK's stream helpers expect."""
    at = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "message":
        text = item["content"][0]["text"]
        added = {**item, "status": "in_progress", "content": []}
        empty = {"type": "output_text", "text": "", "annotations": []}
        middle = [
            {"type": "response.content_part.added", **at, "content_index": 0, "part": empty},
            {"type": "response.output_text.delta", **at, "content_index": 0, "delta": text, "logprobs": []},
            {"type": "response.output_text.done", **at, "content_index": 0, "text": text, "logprobs": []},
            {"type": "response.content_part.done", **at, "content_index": 0, "part": item["content"][0]},
        ]
    elif item["type"] == "function_call":
        added = {**item, "status": "in_progress", "arguments": ""}
        middle = [
            {"type": "response.function_call_arguments.delta", **at, "delta": item["arguments"]},
            {"type": "response.function_call_arguments.done", **at, "arguments": item["arguments"]},
        ]
    else:
        added, middle = item, []
    return [
        {"type": "response.output_item.added", "output_index": index, "item": added},
        *middle,
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def error(status: int, message: str) -> Rendered:
    return json_reply({"error": {"message": message, "type": "invalid_request_error", "code": None}}, status)
