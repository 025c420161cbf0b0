"""The `llm` agent kind: any OpenAI-compatible chat-completions endpoint, acting through tool calls.

Each `respond()` appends the user message, then loops: send the conversation and the role's tools,
run the tool calls the model asks for through `ToolAccess`, send the results back, until the model
answers without tool calls (its text is the response) or `max_turns` round trips are used up.
The conversation is kept on the instance, so later prompts continue the same dialogue.

httpx is imported inside `respond`, so registering this kind costs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentenv.config import mask_text
from agentenv.contracts import AgentKind, AgentResponse, ToolAccess
from pydantic import BaseModel, ConfigDict, Field

from agentenv_agents._settings import coerce_settings

if TYPE_CHECKING:
    import httpx

_SNIPPET = 300
_HINTS = {
    401: 'check `api_key` (settings field; e.g. api_key = "env:OPENAI_API_KEY" in [model])',
    403: "check `api_key` and that it may use this model",
    404: "check `base_url` (it ends before /chat/completions, e.g. https://api.openai.com/v1) and `model`",
    429: "the endpoint is rate limiting; retry later or lower concurrency",
}


class LlmAgentError(RuntimeError):
    """The endpoint could not be reached or answered with an error or an unusable body."""


class LlmSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(min_length=1)
    """Endpoint root, e.g. `https://api.openai.com/v1`; requests go to `<base_url>/chat/completions`."""
    api_key: str | None = Field(default=None, repr=False)
    """Bearer token, already resolved by the caller (config references like `env:NAME`)."""
    model: str = Field(min_length=1)
    system_prompt: str = ""
    temperature: float = Field(default=0.0, ge=0)
    max_turns: int = Field(default=20, gt=0)
    """Tool-calling round trips allowed per `respond()`."""
    timeout: float = Field(default=60, gt=0)
    """Seconds to wait for each HTTP request."""
    seed: int | None = None


class LlmAgent(AgentKind[LlmSettings]):
    """A chat model with tool calling; the world's tools are offered as functions."""

    name = "llm"
    description = "A model behind any OpenAI-compatible chat-completions endpoint, acting through tool calls."
    Settings = LlmSettings

    def __init__(self, settings: BaseModel | Mapping[str, Any] | None = None) -> None:
        options = coerce_settings(LlmSettings, settings)
        super().__init__(options)
        self.options = options
        self.messages: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.usage: dict[str, int] = {"prompt_tokens": 0, "completion_tokens": 0, "requests": 0}

    @property
    def url(self) -> str:
        return self.options.base_url.rstrip("/") + "/chat/completions"

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        import httpx

        if not self.messages and self.options.system_prompt:
            self.messages.append({"role": "system", "content": self.options.system_prompt})
        self.messages.append({"role": "user", "content": prompt})
        functions = [as_function(spec) for spec in tools.list_tools()]
        async with httpx.AsyncClient(timeout=self.options.timeout) as client:
            for round_trip in range(self.options.max_turns):
                message = await self._complete(client, functions)
                calls = self._tool_calls(message, round_trip)
                assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
                if calls:
                    assistant["tool_calls"] = calls
                self.messages.append(assistant)
                if not calls:
                    return AgentResponse(text=content_text(message.get("content")))
                for call in calls:
                    self.messages.append(self._run(call, tools))
        limit = self.options.max_turns
        return AgentResponse(
            text=f"Stopped after {limit} tool-calling round trips without a final answer "
            "(raise `max_turns` to allow more).",
            structured={"stopped": "max_turns", "max_turns": limit},
        )

    # ---- one request ------------------------------------------------------------------------------
    async def _complete(self, client: httpx.AsyncClient, functions: list[dict[str, Any]]) -> dict[str, Any]:
        """POST the conversation; the first choice's message, or `LlmAgentError` naming URL and problem."""
        import httpx

        body: dict[str, Any] = {
            "model": self.options.model,
            "messages": self.messages,
            "temperature": self.options.temperature,
        }
        if functions:
            body["tools"] = functions
        if self.options.seed is not None:
            body["seed"] = self.options.seed
        headers = {"Authorization": f"Bearer {self.options.api_key}"} if self.options.api_key else {}
        try:
            response = await client.post(self.url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise LlmAgentError(
                f"POST {mask_text(self.url)}: no answer within {self.options.timeout:g} s (settings field `timeout`)"
            ) from None
        except httpx.HTTPError as exc:
            raise LlmAgentError(
                f"POST {mask_text(self.url)}: request failed: {type(exc).__name__}: {self._redact(exc)}"
            ) from None
        self.usage["requests"] += 1
        if response.status_code >= 400:
            hint = _HINTS.get(response.status_code, "")
            raise LlmAgentError(
                f"POST {mask_text(self.url)}: HTTP {response.status_code} {response.reason_phrase}: "
                f"{error_detail(self._redact(response.text))}" + (f" ({hint})" if hint else "")
            )
        try:
            data = response.json()
        except ValueError:
            raise self._malformed(f"the body is not JSON: {self._redact(response.text)[:_SNIPPET]!r}") from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._malformed(
                f"no `choices` list with a first choice in {self._redact(response.text)[:_SNIPPET]!r}"
            )
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise self._malformed("choices[0] has no `message` object")
        usage = data.get("usage")
        if isinstance(usage, dict):
            for key in ("prompt_tokens", "completion_tokens"):
                if isinstance(usage.get(key), int):
                    self.usage[key] += usage[key]
        return message

    def _tool_calls(self, message: dict[str, Any], round_trip: int) -> list[dict[str, Any]]:
        """The message's tool calls, normalized (ids filled in when a server leaves them out)."""
        raw = message.get("tool_calls") or []
        if not isinstance(raw, list):
            raise self._malformed("choices[0].message.tool_calls is not a list")
        calls = []
        for index, call in enumerate(raw):
            where = f"choices[0].message.tool_calls[{index}]"
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise self._malformed(f"{where} has no `function` with a `name`")
            arguments = function.get("arguments")
            if arguments is None:
                arguments = "{}"
            elif not isinstance(arguments, str):  # some servers send an object instead of JSON text
                arguments = json.dumps(arguments)
            call_id = call.get("id") or f"call_{self.usage['requests']}_{round_trip}_{index}"
            calls.append(
                {"id": str(call_id), "type": "function", "function": {"name": function["name"], "arguments": arguments}}
            )
        return calls

    def _run(self, call: dict[str, Any], tools: ToolAccess) -> dict[str, Any]:
        """Run one tool call through the world; the `role: tool` message carrying its outcome."""
        name = call["function"]["name"]
        text = call["function"]["arguments"]
        arguments: Any = text
        try:
            arguments = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            outcome: dict[str, Any] = _refusal(
                f"the arguments of {name} are not valid JSON ({exc.msg} at position {exc.pos}); "
                "send one JSON object with the tool's parameters"
            )
        else:
            if isinstance(arguments, dict):
                outcome = tools.call_tool(name, arguments)
            else:
                outcome = _refusal(f"the arguments of {name} must be a JSON object, not {type(arguments).__name__}")
        self.calls.append({"id": call["id"], "tool": name, "args": arguments, **outcome})
        return {
            "role": "tool",
            "tool_call_id": call["id"],
            "content": json.dumps(outcome, ensure_ascii=False, default=str),
        }

    def _malformed(self, problem: str) -> LlmAgentError:
        return LlmAgentError(
            f"POST {mask_text(self.url)}: malformed chat-completions response: {self._redact(problem)}"
        )

    def _redact(self, text: object) -> str:
        """Never let the api key reach an error message, whatever a server echoes back."""
        shown = str(text)
        key = self.options.api_key
        return shown.replace(key, "***") if key else shown


def as_function(spec: dict[str, Any]) -> dict[str, Any]:
    """A world tool (`name`, `description`, `inputSchema`) as an OpenAI function tool."""
    return {
        "type": "function",
        "function": {
            "name": spec["name"],
            "description": spec.get("description") or "",
            "parameters": spec.get("inputSchema") or {"type": "object", "properties": {}},
        },
    }


def content_text(content: Any) -> str:
    """A message's text: plain string content, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def error_detail(body: str) -> str:
    """The useful part of an error body: `error.message` when it is the usual JSON shape, else a snippet."""
    try:
        data = json.loads(body)
    except ValueError:
        return body[:_SNIPPET] or "(empty body)"
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str):
        return message[:_SNIPPET]
    if isinstance(error, str):
        return error[:_SNIPPET]
    return body[:_SNIPPET]


def _refusal(message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": "invalid_arguments", "message": message}}
