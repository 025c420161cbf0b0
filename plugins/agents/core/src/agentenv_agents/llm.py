"""The `llm` agent kind: a model behind OpenAI Chat Completions, OpenAI Responses or Anthropic Messages
(settings field `api`), acting through tool calls.

Each `respond()` appends the user message, then loops: send the conversation and the role's tools,
run the tool calls the model asks for through `ToolAccess`, send the results back, until the model
answers without tool calls (its text is the response) or `max_turns` round trips are used up.
The conversation is kept on the instance, in the API's own format, so later prompts continue the same
dialogue. What differs between the APIs lives in `wires`.

httpx is imported inside `respond`, so registering this kind costs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentenv.config import mask_text
from agentenv.contracts import AgentKind, AgentResponse, ToolAccess
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentenv_agents._settings import coerce_settings
from agentenv_agents.wires import MODEL_APIS, WIRES, Call, Malformed, ModelApi, Reply, Request, Wire, error_detail

if TYPE_CHECKING:
    import httpx

_SNIPPET = 300
_HINTS = {
    401: 'check `api_key` (settings field; e.g. api_key = "env:OPENAI_API_KEY" in [model])',
    403: "check `api_key` and that it may use this model",
    429: "the endpoint is rate limiting; retry later or lower concurrency",
}
API_FIX = (
    "set `api` to openai-chat (POST <base_url>/chat/completions), openai-responses (POST <base_url>/responses) "
    'or anthropic (POST <base_url>/v1/messages), e.g. api = "openai-chat" in [model] of .agentenv/config.toml'
)


class LlmAgentError(RuntimeError):
    """The endpoint could not be reached or answered with an error or an unusable body."""


class LlmSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(min_length=1)
    """Endpoint root: `https://api.openai.com/v1` for the OpenAI APIs, `https://api.anthropic.com` for Anthropic."""
    api_key: str | None = Field(default=None, repr=False)
    """The key, already resolved by the caller (config references like `env:NAME`)."""
    model: str = Field(min_length=1)
    api: ModelApi = Field(
        default="openai-chat",
        description="The endpoint's API: openai-chat (<base_url>/chat/completions), openai-responses "
        "(<base_url>/responses) or anthropic (<base_url>/v1/messages).",
    )
    system_prompt: str = ""
    temperature: float = Field(default=0.0, ge=0)
    max_turns: int = Field(default=20, gt=0)
    """Tool-calling round trips allowed per `respond()`."""
    timeout: float = Field(default=60, gt=0)
    """Seconds to wait for each HTTP request."""
    seed: int | None = None
    """Sent as `seed` (openai-chat only; the other APIs take none)."""
    max_tokens: int | None = Field(
        default=None, gt=0, description="Most tokens per model reply (anthropic requires one: 4096 when unset)."
    )

    @field_validator("api", mode="before")
    @classmethod
    def _known_api(cls, value: Any) -> Any:
        if value not in MODEL_APIS:
            raise ValueError(f"{value!r} is not an API the llm agent speaks; {API_FIX}")
        return value


class LlmAgent(AgentKind[LlmSettings]):
    """A model with tool calling; the world's tools are offered as its functions."""

    name = "llm"
    description = "A model behind OpenAI Chat Completions, OpenAI Responses or Anthropic Messages, using tools."
    Settings = LlmSettings

    def __init__(self, settings: BaseModel | Mapping[str, Any] | None = None) -> None:
        options = coerce_settings(LlmSettings, settings)
        super().__init__(options)
        self.options = options
        self.wire: Wire = WIRES[options.api]
        self.messages: list[dict[str, Any]] = []
        """The conversation, in the API's own format (chat messages, Responses input items, Anthropic messages)."""
        self.calls: list[dict[str, Any]] = []
        self.usage: dict[str, int] = {"prompt_tokens": 0, "completion_tokens": 0, "requests": 0}

    @property
    def url(self) -> str:
        return self.wire.url(self.options.base_url)

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        import httpx

        if not self.messages:
            self.messages += self.wire.opening(self.options.system_prompt)
        self.messages.append(self.wire.user(prompt))
        offered = [as_tool(spec) for spec in tools.list_tools()]
        async with httpx.AsyncClient(timeout=self.options.timeout) as client:
            for round_trip in range(self.options.max_turns):
                reply = await self._complete(client, offered, round_trip)
                self.messages += reply.items
                if not reply.calls:
                    return AgentResponse(text=reply.text)
                self.messages += self.wire.results([self._run(call, tools) for call in reply.calls])
        limit = self.options.max_turns
        return AgentResponse(
            text=f"Stopped after {limit} tool-calling round trips without a final answer "
            "(raise `max_turns` to allow more).",
            structured={"stopped": "max_turns", "max_turns": limit},
        )

    # ---- one request ------------------------------------------------------------------------------
    async def _complete(self, client: httpx.AsyncClient, tools: list[dict[str, Any]], round_trip: int) -> Reply:
        """POST the conversation; the reply read by the API's wire, or `LlmAgentError` naming URL and problem."""
        import httpx

        options = self.options
        request = Request(
            model=options.model,
            conversation=self.messages,
            tools=tools,
            system_prompt=options.system_prompt,
            temperature=options.temperature,
            seed=options.seed,
            max_tokens=options.max_tokens,
        )
        try:
            body, headers = self.wire.body(request), self.wire.headers(options.api_key)
            response = await client.post(self.url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise LlmAgentError(
                f"POST {mask_text(self.url)}: no answer within {options.timeout:g} s (settings field `timeout`)"
            ) from None
        except httpx.HTTPError as exc:
            raise LlmAgentError(
                f"POST {mask_text(self.url)}: request failed: {type(exc).__name__}: {self._redact(exc)}"
            ) from None
        self.usage["requests"] += 1
        if response.status_code >= 400:
            hint = _HINTS.get(response.status_code, "")
            if response.status_code == 404:
                hint = f"check `base_url` ({self.wire.path_hint}), `api` (now {options.api}) and `model`"
            raise LlmAgentError(
                f"POST {mask_text(self.url)}: HTTP {response.status_code} {response.reason_phrase}: "
                f"{error_detail(self._redact(response.text))}" + (f" ({hint})" if hint else "")
            )
        try:
            data = response.json()
        except ValueError:
            raise self._malformed(f"the body is not JSON: {self._redact(response.text)[:_SNIPPET]!r}") from None
        try:
            reply = self.wire.read(data, f"call_{self.usage['requests']}_{round_trip}")
        except Malformed as exc:
            raise self._malformed(f"{exc} in {self._redact(response.text)[:_SNIPPET]!r}") from None
        self.usage["prompt_tokens"] += reply.input_tokens
        self.usage["completion_tokens"] += reply.output_tokens
        return reply

    def _run(self, call: Call, tools: ToolAccess) -> tuple[Call, str, bool]:
        """Run one tool call through the world; the call, its outcome as JSON text, and whether it failed."""
        arguments: Any = call.arguments
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            outcome: dict[str, Any] = _refusal(
                f"the arguments of {call.name} are not valid JSON ({exc.msg} at position {exc.pos}); "
                "send one JSON object with the tool's parameters"
            )
        else:
            if isinstance(arguments, dict):
                outcome = tools.call_tool(call.name, arguments)
            else:
                outcome = _refusal(
                    f"the arguments of {call.name} must be a JSON object, not {type(arguments).__name__}"
                )
        self.calls.append({"id": call.id, "tool": call.name, "args": arguments, **outcome})
        return call, json.dumps(outcome, ensure_ascii=False, default=str), not outcome.get("ok", False)

    def _malformed(self, problem: str) -> LlmAgentError:
        return LlmAgentError(f"POST {mask_text(self.url)}: malformed {self.wire.label}: {self._redact(problem)}")

    def _redact(self, text: object) -> str:
        """Never let the api key reach an error message, whatever a server echoes back."""
        shown = str(text)
        key = self.options.api_key
        return shown.replace(key, "***") if key else shown


def as_tool(spec: dict[str, Any]) -> dict[str, Any]:
    """A world tool with its description and input schema filled in (each wire writes its own shape)."""
    return {
        "name": spec["name"],
        "description": spec.get("description") or "",
        "inputSchema": spec.get("inputSchema") or {"type": "object", "properties": {}},
    }


def _refusal(message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": "invalid_arguments", "message": message}}
