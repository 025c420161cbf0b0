"""LLM-written persona replies: when a model is configured, a trigger's `reply = {llm = true, text = …}` has the
simulated person answer in their own words (`text` is then the instruction), through any OpenAI-compatible
chat-completions endpoint. With no model configured the scripted `text` is sent as it is."""

from __future__ import annotations

from typing import Any

from agentenv.config import ConfigError
from agentenv.contracts import Message, StepContext, StepFailed

PERSONA_PROMPT = (
    "You are {persona}, a person in a simulated world. Someone wrote to you:\n\n{message}\n\n"
    "Answer them in one short message, in your own voice, following this instruction: {instruction}\n"
    "Write only the message."
)


def model_settings(ctx: StepContext) -> dict[str, Any] | None:
    """base_url, model and api_key from `--model` and config `[model]`; None when no model is configured."""
    try:
        base_url = ctx.setting("model.base_url")
        model = (ctx.overrides or {}).get("model") or ctx.setting("model.model")
        api_key = ctx.setting("model.api_key")
    except ConfigError as exc:
        raise StepFailed(f"config [model]: {exc}") from None
    if not (base_url and model):
        return None
    api = ctx.config.raw("model.api")
    if api not in (None, "openai-chat"):
        raise StepFailed(
            f"config [model]: simulated people reply through openai-chat (<base_url>/chat/completions) only, and "
            f"api is {api!r}; point [model] at an OpenAI-compatible endpoint for them"
        )
    return {"base_url": str(base_url).rstrip("/"), "model": model, "api_key": api_key}


def model_configured(ctx: StepContext) -> bool:
    """Whether `[model]` (or `--model`) names an endpoint and a model, read without resolving references: a
    world whose triggers never reply by model must not fail because `api_key = "env:…"` is unset."""
    model = (ctx.overrides or {}).get("model") or ctx.config.raw("model.model")
    return bool(ctx.config.raw("model.base_url") and model)


def llm_responder(ctx: StepContext, seed: int, timeout: float = 60.0) -> Any:
    """A `World.responder`: (persona, message, instruction) → reply text from the model. `[model]` is resolved
    at the first reply, so an unset key fails that reply (recorded on the trigger), not the run."""
    resolved: dict[str, Any] = {}

    def respond(persona: str, message: Message, instruction: str) -> str:
        import httpx

        if not resolved:
            try:
                resolved.update(model_settings(ctx) or {})
            except StepFailed as exc:
                raise RuntimeError(str(exc)) from None
            if not resolved:
                raise RuntimeError("config [model]: no base_url and model are configured")
        settings = resolved

        body = {
            "model": settings["model"],
            "temperature": 0,
            "seed": seed,
            "messages": [
                {
                    "role": "user",
                    "content": PERSONA_PROMPT.format(persona=persona, message=message.text, instruction=instruction),
                }
            ],
        }
        headers = {"Authorization": f"Bearer {settings['api_key']}"} if settings.get("api_key") else {}
        url = f"{settings['base_url']}/chat/completions"
        try:
            answer = httpx.post(url, json=body, headers=headers, timeout=timeout)
            answer.raise_for_status()
            text = answer.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise RuntimeError(f"persona reply from {url} failed: {type(exc).__name__}: {exc}") from None
        if not isinstance(text, str) or not text.strip():
            raise RuntimeError(f"persona reply from {url}: the model returned no text")
        return text.strip()

    return respond
