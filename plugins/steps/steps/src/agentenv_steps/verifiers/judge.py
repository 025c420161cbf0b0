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

from agentenv.contracts import StepContext, StepFailed

SYSTEM_PROMPT = (
    "You are a strict, impartial grader of an AI agent's work. For each criterion, decide from the evidence "
    "given (the task prompt, the agent's final response and the tool calls it made) whether the criterion is "
    "met. Judge only what the evidence shows; when the evidence is missing or unclear, the criterion is not met. "
    'Answer with one JSON object and nothing else: {"verdicts": [{"name": <criterion name, exactly as given>, '
    '"passed": true or false, "reason": <one short sentence>}]}, one verdict per criterion, in the order given.'
)
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


def configured_model(ctx: StepContext) -> tuple[JudgeModel | None, str]:
    """The judge model from config and overrides, or (None, what is missing)."""
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
    missing = [key for key, value in (("base_url", base_url), ("model", model)) if not value]
    if missing:
        return None, " and ".join(f"model.{key}" for key in missing)
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


def request_body(model: JudgeModel, criteria: list[tuple[str, str]], material: str) -> dict[str, Any]:
    listed = "\n".join(f"- name: {name}\n  description: {description}" for name, description in criteria)
    return {
        "model": model.model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"# Evidence\n\n{material}\n\n# Criteria\n\n{listed}"},
        ],
    }


async def ask_judge(
    model: JudgeModel, criteria: list[tuple[str, str]], material: str, timeout: float
) -> dict[str, tuple[bool, str]]:
    """Send one request; name → (passed, reason) for every criterion, or StepFailed."""
    import httpx

    headers = {"Authorization": f"Bearer {model.api_key}"} if model.api_key else {}
    body = request_body(model, criteria, material)
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
    return parse_verdicts(reply.text, [name for name, _ in criteria], model)


def parse_verdicts(text: str, names: list[str], model: JudgeModel) -> dict[str, tuple[bool, str]]:
    """Strictly: a chat completion whose message is `{"verdicts": [{name, passed, reason}]}`, one per name."""

    def bad(why: str, shown: str) -> StepFailed:
        return StepFailed(
            f"the LLM judge ({model.model} at {model.url}) gave an unusable answer: {why}; "
            f"it began: {shown[:300]!r}. Use a model that follows JSON instructions, or give the "
            "criteria deterministic `check`s"
        )

    try:
        content = json.loads(text)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise bad(f"not a chat completion ({type(exc).__name__})", text) from exc
    if not isinstance(content, str):
        raise bad("the message has no text content", text)
    try:
        answer = json.loads(content)
    except ValueError as exc:
        raise bad(f"the message is not JSON ({exc})", content) from exc
    verdicts = answer.get("verdicts") if isinstance(answer, dict) else None
    if not isinstance(verdicts, list):
        raise bad('expected a JSON object with a "verdicts" list', content)
    found: dict[str, tuple[bool, str]] = {}
    for item in verdicts:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise bad("a verdict is not an object with a `name`", content)
        name, passed, reason = item["name"], item.get("passed"), item.get("reason", "")
        if name not in names:
            raise bad(f"a verdict names {name!r}, which is not one of the criteria ({', '.join(names)})", content)
        if name in found:
            raise bad(f"criterion {name!r} has two verdicts", content)
        if not isinstance(passed, bool):
            raise bad(f"`passed` of {name!r} is {passed!r}, not true/false", content)
        if not isinstance(reason, str):
            raise bad(f"`reason` of {name!r} is not text", content)
        found[name] = (passed, reason)
    if missing := [n for n in names if n not in found]:
        raise bad(f"no verdict for {', '.join(repr(n) for n in missing)}", content)
    return found
