"""Anthropic Messages (`POST /v1/messages`), streaming or not, as Claude Code and the `anthropic` SDK read it.

Claude Code hides MCP tools behind its `ToolSearch` tool and lists them only by name in the conversation
(see `search`): the stand-in then asks for `ToolSearch select:<names>` itself, so a script never has to.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentenv_model_standin.wire import Offered, Part, Rendered, Usage, json_reply, new_id, sse

name = "anthropic"
_SEARCH_TOOL = "ToolSearch"


def offered(body: dict[str, Any]) -> list[Offered]:
    return [Offered(str(tool["name"])) for tool in body.get("tools") or [] if isinstance(tool, dict) and "name" in tool]


def search(body: dict[str, Any], suffixes: list[str]) -> Part | None:
    """`ToolSearch select:mcp__world__a,…` for deferred tools named in the conversation's text."""
    if _SEARCH_TOOL not in {tool.name for tool in offered(body)}:
        return None
    text = json.dumps([body.get("system"), body.get("messages")])
    names: list[str] = []
    for suffix in suffixes:
        found = re.search(rf"\b(mcp__[A-Za-z0-9_-]+?__{re.escape(suffix)})\b", text)
        if found is None:
            return None
        names.append(found.group(1))
    return Part(tool=Offered(_SEARCH_TOOL), arguments={"query": "select:" + ",".join(names)}, search=True)


def _blocks(parts: list[Part]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if part.tool is None:
            blocks.append({"type": "text", "text": part.text or ""})
        else:
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{part.call_id}", "name": part.tool.name, "input": part.arguments}
            )
    return blocks


def render(parts: list[Part], body: dict[str, Any], usage: Usage) -> Rendered:
    stop_reason = "tool_use" if any(part.tool for part in parts) else "end_turn"
    message = {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "stand-in"),
        "content": _blocks(parts),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
    }
    if not body.get("stream"):
        return json_reply(message)
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening, delta = {**block, "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage.output_tokens},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse(events)


def error(status: int, message: str) -> Rendered:
    return json_reply({"type": "error", "error": {"type": "invalid_request_error", "message": message}}, status)
