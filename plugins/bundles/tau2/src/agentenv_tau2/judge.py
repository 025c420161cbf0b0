"""The `NL_ASSERTION` judge: a chat model reads the conversation and says, per assertion, whether the agent met it.

As in τ²-bench, the model answers JSON `{"results": [{"expectedOutcome", "reasoning", "metExpectation"}]}` and
the component is 1.0 exactly when every result it returns is met. The prompt is ours; the model is the config's
`[model]` (agentenv-agents' `llm` kind makes the request).
"""

from __future__ import annotations

import json
from typing import Any

SYSTEM = (
    "You grade a conversation between a customer service agent and a customer against a list of expected "
    "outcomes. Judge each outcome on its own. Answer with JSON only, in this shape: "
    '{"results": [{"expectedOutcome": "<the outcome, repeated>", "reasoning": "<why, briefly>", '
    '"metExpectation": true or false}]}'
)


class JudgeError(RuntimeError):
    """The judge model could not be reached or answered something that is not the JSON asked for."""


def judge_prompt(conversation: list[dict[str, str]], assertions: list[str]) -> str:
    lines = "\n".join(f"{m['role']}: {m['content']}" for m in conversation)
    return f"Conversation:\n{lines}\n\nExpected outcomes:\n{json.dumps(assertions)}"


def verdicts_of(text: str) -> list[bool]:
    """`metExpectation` of every result in the judge's JSON answer."""
    try:
        results = json.loads(text).get("results", [])
        return [bool(result["metExpectation"]) for result in results]
    except (json.JSONDecodeError, AttributeError, KeyError, TypeError) as exc:
        raise JudgeError(f"the judge's answer is not the JSON asked for ({exc}): {text[:200]!r}") from None


async def judge(model: dict[str, Any], conversation: list[dict[str, str]], assertions: list[str]) -> list[bool]:
    from agentenv_agents.api import LlmAgent

    from agentenv_tau2.usersim import NoTools

    agent = LlmAgent({**model, "system_prompt": SYSTEM, "max_turns": 1})
    try:
        response = await agent.respond(judge_prompt(conversation, assertions), NoTools())
    except Exception as exc:
        raise JudgeError(f"the judge model failed: {exc}") from None
    return verdicts_of(response.text)
