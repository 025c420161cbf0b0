"""The LLM judge: one chat-completions request that returns a JSON verdict per criterion.

The model comes from the run's configuration (`[model] base_url, model, api_key`, with `env:`/`secret:`
references resolved) or from the command line (`--model NAME` overrides the model name). The request asks
for `temperature = 0` and a JSON object; the answer is parsed strictly, and an answer that is not exactly
one verdict per asked criterion fails the step. A judge that cannot answer never passes anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentenv.config import ConfigError, resolve
from agentenv.contracts import StepContext, StepFailed
from pydantic import BaseModel, ConfigDict, Field

from agentenv_steps.verifiers.judging import Ask, JudgeAnswer, JudgeBrief, parse_answer, system_prompt, user_message

MAX_EVIDENCE_CHARS = 24_000
MAX_RESULT_CHARS = 600


@dataclass(frozen=True)
class JudgeModel:
    base_url: str
    model: str
    api_key: str | None = None

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


class JudgeModelSettings(BaseModel):
    """A step's own judge model and endpoint; each field given wins over `--model` and the config's [model]."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(None, description="Model name.")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint (…/v1).")
    api_key: str | None = Field(
        None, pattern=r"^env:", description="An env:NAME reference (a secret: key goes in the config's [model])."
    )


def configured_model(ctx: StepContext, pinned: JudgeModelSettings | None = None) -> tuple[JudgeModel | None, str]:
    """The judge model from the step's `judge_model`, the overrides and the config, or (None, what is missing)."""
    try:
        base_url = ctx.config.get("model.base_url")
        model = ctx.config.get("model.model")
        api_key = ctx.config.get("model.api_key")
    except Exception as exc:  # an unresolvable env:/secret: reference names itself in the message
        raise StepFailed(f"the judge model's configuration cannot be read: {exc}") from exc
    override = (getattr(ctx, "overrides", None) or {}).get("model")
    if isinstance(override, dict):
        base_url = override.get("base_url", base_url)
        model = override.get("model", model)
        api_key = override.get("api_key", api_key)
    elif isinstance(override, str) and override:
        model = override
    if pinned is not None:
        base_url, model = pinned.base_url or base_url, pinned.model or model
        if pinned.api_key:
            try:
                api_key = resolve(pinned.api_key, field="judge_model.api_key", file=None)
            except ConfigError as exc:
                raise StepFailed(f"field `judge_model.api_key`: {exc}") from exc
    missing = [key for key, value in (("base_url", base_url), ("model", model)) if not value]
    if missing:
        return None, " and ".join(f"model.{key}" for key in missing)
    api = ctx.config.raw("model.api")
    if api not in (None, "openai-chat") and not (pinned and pinned.base_url):
        raise StepFailed(
            f"the LLM judge speaks openai-chat (<base_url>/chat/completions) only, and [model] api is {api!r}; "
            "give the step `judge_model` with an OpenAI-compatible base_url, or judge with "
            '`judge_agent = { kind = "llm" }`, which follows [model] api'
        )
    return JudgeModel(str(base_url), str(model), str(api_key) if api_key else None), ""


def evidence(prompt: str | None, response: str | None, tool_calls: list[dict[str, Any]] | None) -> str:
    """The material the judge sees, compacted and capped so one run never sends an unbounded request."""
    parts = []
    if prompt is not None:
        parts.append(f"## Task prompt given to the agent\n{prompt}")
    if response is not None:
        parts.append(f"## The agent's final response\n{response}")
    if tool_calls is not None:
        lines = []
        for event in tool_calls:
            result = json.dumps(event.get("error") or event.get("result"), sort_keys=True, default=str)
            if len(result) > MAX_RESULT_CHARS:
                result = result[:MAX_RESULT_CHARS] + "…(truncated)"
            status = "ERROR" if event.get("error") else "ok"
            args = json.dumps(event.get("args"), sort_keys=True, default=str)
            lines.append(
                f"- [{event.get('seq')}] {event.get('role')} called {event.get('tool')}({args}) → {status}: {result}"
            )
        parts.append("## Tool calls in the world, in order\n" + ("\n".join(lines) or "(none)"))
    text = "\n\n".join(parts)
    if len(text) > MAX_EVIDENCE_CHARS:
        text = text[:MAX_EVIDENCE_CHARS] + "\n…(evidence truncated)"
    return text


def request_body(model: JudgeModel, asks: list[Ask], material: str, brief: JudgeBrief) -> dict[str, Any]:
    return {
        "model": model.model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": system_prompt(brief)},
            {"role": "user", "content": user_message(asks, material, brief)},
        ],
    }


async def ask_judge(
    model: JudgeModel, asks: list[Ask], material: str, brief: JudgeBrief, timeout: float
) -> JudgeAnswer:
    """Send one request; a verdict for every criterion, or StepFailed."""
    import httpx

    headers = {"Authorization": f"Bearer {model.api_key}"} if model.api_key else {}
    body = request_body(model, asks, material, brief)
    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            reply = await client.post(model.url, json=body, headers=headers)
    except httpx.HTTPError as exc:
        raise StepFailed(
            f"the LLM judge at {model.url} could not be reached: {type(exc).__name__}: {exc}; "
            "check model.base_url and that the server is up"
        ) from exc
    if reply.status_code >= 400:
        raise StepFailed(
            f"the LLM judge at {model.url} answered HTTP {reply.status_code}: {reply.text[:300]}; "
            "check model.base_url, model.model and model.api_key"
        )
    who = f"LLM judge ({model.model} at {model.url})"
    return parse_answer(message_text(reply.text, who), [a.name for a in asks], brief, who)


def message_text(text: str, who: str) -> str:
    """The text of a chat completion's first message."""
    try:
        content = json.loads(text)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise StepFailed(
            f"the {who} gave an unusable answer: not a chat completion ({type(exc).__name__}); it began: {text[:300]!r}"
        ) from exc
    if not isinstance(content, str):
        raise StepFailed(
            f"the {who} gave an unusable answer: the message has no text content; it began: {text[:300]!r}"
        )
    return content
