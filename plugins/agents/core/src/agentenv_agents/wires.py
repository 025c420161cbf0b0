"""The three model APIs the `llm` kind speaks, each as a small `Wire`: where to POST, how to write the request,
how to read the reply, and how tool results go back.

The agent's loop (`llm.LlmAgent`) is the same for every API; only these shapes differ. The conversation is kept
in the API's own format (chat messages, Responses input items, Anthropic messages), so nothing is lost between
turns. Each `read` raises `Malformed` with the problem; the agent adds the URL and which API it expected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

ModelApi = Literal["openai-chat", "openai-responses", "anthropic"]
MODEL_APIS: tuple[str, ...] = get_args(ModelApi)
ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_MAX_TOKENS = 4096
"""Anthropic requires `max_tokens`; this is sent when the settings give none."""


class Malformed(ValueError):
    """The reply could not be read as the API's response body."""


@dataclass(frozen=True)
class Call:
    """One tool call the model asked for; `arguments` is JSON text, as the model wrote it."""

    id: str
    name: str
    arguments: str


@dataclass
class Reply:
    """One model reply, read: its text, its tool calls, its tokens, and the items recording it in the conversation."""

    text: str
    calls: list[Call]
    items: list[dict[str, Any]]
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Request:
    """What every API's request is made of."""

    model: str
    conversation: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    """World tools as `{name, description, inputSchema}`."""
    system_prompt: str
    temperature: float
    seed: int | None
    max_tokens: int | None


class Wire(Protocol):
    name: str
    label: str
    """How errors name the response body (`chat-completions response`)."""
    path_hint: str
    """What `base_url` should look like, for the 404 hint."""

    def url(self, base_url: str) -> str: ...

    def headers(self, api_key: str | None) -> dict[str, str]: ...

    def opening(self, system_prompt: str) -> list[dict[str, Any]]:
        """Conversation items before the first user message."""
        ...

    def user(self, prompt: str) -> dict[str, Any]: ...

    def body(self, request: Request) -> dict[str, Any]: ...

    def read(self, data: Any, fallback_id: str) -> Reply: ...

    def results(self, outcomes: list[tuple[Call, str, bool]]) -> list[dict[str, Any]]:
        """Conversation items carrying each call's outcome (JSON text; the flag says whether it failed)."""
        ...


def _bearer(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _arguments(value: Any) -> str:
    """Arguments as JSON text (some servers send an object instead of text)."""
    if value is None:
        return "{}"
    return value if isinstance(value, str) else json.dumps(value)


def _list(data: Any, key: str, where: str) -> list[Any]:
    found = data.get(key) if isinstance(data, dict) else None
    if not isinstance(found, list):
        raise Malformed(f"no `{key}` list in {where}")
    return found


def _tokens(data: Any, key_in: str, key_out: str) -> tuple[int, int]:
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return 0, 0
    spent_in, spent_out = usage.get(key_in), usage.get(key_out)
    return (spent_in if isinstance(spent_in, int) else 0), (spent_out if isinstance(spent_out, int) else 0)


class OpenAIChat:
    """OpenAI Chat Completions: `POST <base_url>/chat/completions`, the system prompt as the first message."""

    name = "openai-chat"
    label = "chat-completions response"
    path_hint = "it ends before /chat/completions, e.g. https://api.openai.com/v1"

    def url(self, base_url: str) -> str:
        return base_url.rstrip("/") + "/chat/completions"

    def headers(self, api_key: str | None) -> dict[str, str]:
        return _bearer(api_key)

    def opening(self, system_prompt: str) -> list[dict[str, Any]]:
        return [{"role": "system", "content": system_prompt}] if system_prompt else []

    def user(self, prompt: str) -> dict[str, Any]:
        return {"role": "user", "content": prompt}

    def body(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "messages": request.conversation,
            "temperature": request.temperature,
        }
        if request.tools:
            body["tools"] = [
                {"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                  "parameters": t["inputSchema"]}}
                for t in request.tools
            ]  # fmt: skip
        if request.seed is not None:
            body["seed"] = request.seed
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return body

    def read(self, data: Any, fallback_id: str) -> Reply:
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise Malformed("no `choices` list with a first choice")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise Malformed("choices[0] has no `message` object")
        raw = message.get("tool_calls") or []
        if not isinstance(raw, list):
            raise Malformed("choices[0].message.tool_calls is not a list")
        calls = []
        for index, call in enumerate(raw):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise Malformed(f"choices[0].message.tool_calls[{index}] has no `function` with a `name`")
            call_id = str(call.get("id") or f"{fallback_id}_{index}")
            calls.append(Call(call_id, function["name"], _arguments(function.get("arguments"))))
        assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if calls:
            assistant["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls
            ]
        tokens = _tokens(data, "prompt_tokens", "completion_tokens")
        return Reply(content_text(message.get("content")), calls, [assistant], *tokens)

    def results(self, outcomes: list[tuple[Call, str, bool]]) -> list[dict[str, Any]]:
        return [{"role": "tool", "tool_call_id": call.id, "content": text} for call, text, _failed in outcomes]


class OpenAIResponses:
    """OpenAI Responses: `POST <base_url>/responses`, the system prompt as `instructions`.

    Output items go back as input items without their server ids, so a server that stores nothing
    (`store: false`, or a stand-in) reads the same conversation.
    """

    name = "openai-responses"
    label = "responses response"
    path_hint = "it ends before /responses, e.g. https://api.openai.com/v1"

    def url(self, base_url: str) -> str:
        return base_url.rstrip("/") + "/responses"

    def headers(self, api_key: str | None) -> dict[str, str]:
        return _bearer(api_key)

    def opening(self, system_prompt: str) -> list[dict[str, Any]]:
        return []

    def user(self, prompt: str) -> dict[str, Any]:
        return {"role": "user", "content": prompt}

    def body(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {"model": request.model, "input": request.conversation,
                                "temperature": request.temperature}  # fmt: skip
        if request.system_prompt:
            body["instructions"] = request.system_prompt
        if request.tools:
            body["tools"] = [
                {"type": "function", "name": t["name"], "description": t["description"], "parameters": t["inputSchema"]}
                for t in request.tools
            ]
        if request.max_tokens is not None:
            body["max_output_tokens"] = request.max_tokens
        return body

    def read(self, data: Any, fallback_id: str) -> Reply:
        if isinstance(data, dict) and data.get("status") == "failed":
            raise Malformed(f"the response failed: {error_detail(json.dumps(data))}")
        texts: list[str] = []
        calls: list[Call] = []
        items: list[dict[str, Any]] = []
        for index, item in enumerate(_list(data, "output", "the response")):
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "message":
                text = content_text(item.get("content"))
                texts.append(text)
                items.append({"role": "assistant", "content": text})
            elif kind == "function_call":
                if not isinstance(item.get("name"), str):
                    raise Malformed(f"output[{index}] is a function_call without a `name`")
                call = Call(str(item.get("call_id") or f"{fallback_id}_{index}"), item["name"],
                            _arguments(item.get("arguments")))  # fmt: skip
                calls.append(call)
                items.append({"type": "function_call", "call_id": call.id, "name": call.name,
                              "arguments": call.arguments})  # fmt: skip
        return Reply("".join(texts), calls, items, *_tokens(data, "input_tokens", "output_tokens"))

    def results(self, outcomes: list[tuple[Call, str, bool]]) -> list[dict[str, Any]]:
        return [{"type": "function_call_output", "call_id": call.id, "output": text} for call, text, _ in outcomes]


class AnthropicMessages:
    """Anthropic Messages: `POST <base_url>/v1/messages` (the SDK's root URL; a base_url already ending in /v1 is
    taken as it is), `x-api-key` and `anthropic-version` headers, the system prompt as `system`."""

    name = "anthropic"
    label = "messages response"
    path_hint = "it is the root, e.g. https://api.anthropic.com (…/v1/messages is added)"

    def url(self, base_url: str) -> str:
        root = base_url.rstrip("/")
        return root + ("/messages" if root.endswith("/v1") else "/v1/messages")

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"anthropic-version": ANTHROPIC_VERSION, **({"x-api-key": api_key} if api_key else {})}

    def opening(self, system_prompt: str) -> list[dict[str, Any]]:
        return []

    def user(self, prompt: str) -> dict[str, Any]:
        return {"role": "user", "content": prompt}

    def body(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens or ANTHROPIC_MAX_TOKENS,
            "messages": request.conversation,
            "temperature": request.temperature,
        }
        if request.system_prompt:
            body["system"] = request.system_prompt
        if request.tools:
            body["tools"] = [
                {"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}
                for t in request.tools
            ]
        return body

    def read(self, data: Any, fallback_id: str) -> Reply:
        blocks = _list(data, "content", "the message")
        texts: list[str] = []
        calls: list[Call] = []
        for index, block in enumerate(blocks):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                texts.append(str(block.get("text") or ""))
            elif kind == "tool_use":
                if not isinstance(block.get("name"), str):
                    raise Malformed(f"content[{index}] is a tool_use block without a `name`")
                calls.append(Call(str(block.get("id") or f"{fallback_id}_{index}"), block["name"],
                                  _arguments(block.get("input"))))  # fmt: skip
        # An assistant turn with no content cannot be sent back, so an empty reply leaves no item.
        items = [{"role": "assistant", "content": blocks}] if blocks else []
        return Reply("".join(texts), calls, items, *_tokens(data, "input_tokens", "output_tokens"))

    def results(self, outcomes: list[tuple[Call, str, bool]]) -> list[dict[str, Any]]:
        blocks = [
            {"type": "tool_result", "tool_use_id": call.id, "content": text, **({"is_error": True} if failed else {})}
            for call, text, failed in outcomes
        ]
        return [{"role": "user", "content": blocks}] if blocks else []


WIRES: dict[str, Wire] = {wire.name: wire for wire in (OpenAIChat(), OpenAIResponses(), AnthropicMessages())}


def content_text(content: Any) -> str:
    """A message's text: plain string content, or the text parts of a content list (chat `text`, Responses
    `output_text`)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") in ("text", "output_text")
        )
    return ""


def error_detail(body: str, limit: int = 300) -> str:
    """The useful part of an error body: `error.message` when it is the usual JSON shape, else a snippet."""
    try:
        data = json.loads(body)
    except ValueError:
        return body[:limit] or "(empty body)"
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str):
        return message[:limit]
    if isinstance(error, str):
        return error[:limit]
    return body[:limit]
