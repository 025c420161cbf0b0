"""Simulated customers made from a task's `user_scenario`: an offline scripted one and an `llm` one.

Both follow τ²-bench's conventions: the customer speaks first (after the agent's greeting), reveals only what
the scenario says it knows, and ends the conversation with a token: `###STOP###` when its goal is met,
`###TRANSFER###` once handed to a human, `###OUT-OF-SCOPE###` when the scenario cannot carry it further.

A simulated user is a *source of sessions* (`session()`), one per conversation, so forked RL episodes never share
a conversation. A session has `opening()`, `reply(agent_text)` and `done`; `prompt_agent` (its
`simulated_user` field) and the RL API's `say` action drive it.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from agentenv_tau2.tasks import Tau2Task

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
END_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)
GREETING = "Hi! How can I help you today?"
"""τ²'s fixed first agent message; the customer's opening answers it."""

_IDENTITY = re.compile(
    r"\b(email|e-mail|zip|postal|your name|full name|user id|identif|verify|authenticat)", re.IGNORECASE
)
_CONFIRM = re.compile(
    r"\b(confirm|proceed|yes/no|yes or no|shall i|should i|would you like|do you want)\b", re.IGNORECASE
)
_DONE = re.compile(r"\b(anything else|is there anything|have a (great|nice|good) day)\b", re.IGNORECASE)
_TRANSFERRED = re.compile(r"\btransferr?(ed|ing)\b.*\bhuman\b|\bhuman agent\b", re.IGNORECASE)


class Session(Protocol):
    done: bool

    async def opening(self) -> str: ...

    async def reply(self, agent_text: str) -> str: ...


def opening_message(task: Tau2Task) -> str:
    """The scripted customer's first message: why they call and who they are."""
    instructions = task.user_scenario.instructions
    parts = ["Hi!", instructions.reason_for_call.strip(), (instructions.known_info or "").strip()]
    return " ".join(part for part in parts if part)


def ended(text: str) -> bool:
    return any(token in text for token in END_TOKENS)


class ScriptedSession:
    """Deterministic customer: states the reason and known info, answers identity questions with the known
    info, says yes to a confirmation, and stops when the agent wraps up or hands over to a human."""

    def __init__(self, task: Tau2Task) -> None:
        self.task = task
        self.done = False

    async def opening(self) -> str:
        return opening_message(self.task)

    async def reply(self, agent_text: str) -> str:
        instructions = self.task.user_scenario.instructions
        if _TRANSFERRED.search(agent_text):
            text = TRANSFER
        elif _DONE.search(agent_text):
            text = STOP
        elif _IDENTITY.search(agent_text):
            text = (instructions.known_info or "I don't have that information.").strip()
        elif _CONFIRM.search(agent_text):
            text = "Yes, please go ahead."
        else:
            text = OUT_OF_SCOPE
        self.done = ended(text)
        return text


def user_prompt(task: Tau2Task) -> str:
    """The llm customer's system prompt: τ²'s conventions in our words, then the task's scenario."""
    scenario = task.user_scenario
    instructions = scenario.instructions
    lines = [
        "You play a customer contacting a retail store's customer service agent. Write only the customer's next "
        "message, one at a time, in natural language.",
        "Follow the scenario below exactly. Do not invent anything it does not give you: what it does not say is "
        "unknown to you. Do not copy the scenario's wording; say it in your own words. Give details only when the "
        "agent asks for them.",
        f"When your goal is reached, answer with {STOP} alone. If you are transferred to a human agent, answer "
        f"with {TRANSFER}. If the scenario does not tell you how to go on, answer with {OUT_OF_SCOPE}.",
        "",
        "Scenario:",
    ]
    if scenario.persona:
        lines.append(f"Persona: {scenario.persona}")
    lines.append(f"Reason for the call: {instructions.reason_for_call}")
    if instructions.known_info:
        lines.append(f"What you know: {instructions.known_info}")
    if instructions.unknown_info:
        lines.append(f"What you do not know: {instructions.unknown_info}")
    if instructions.task_instructions:
        lines.append(f"How to behave: {instructions.task_instructions}")
    return "\n".join(lines)


class NoTools:
    """The customer acts through words only."""

    def list_tools(self) -> list[dict[str, Any]]:
        return []

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the simulated customer has no tools")


class LlmSession:
    """The customer played by a chat model (agentenv-agents' `llm` kind, the roles flipped: the agent's messages
    are its prompts)."""

    def __init__(self, task: Tau2Task, model: dict[str, Any]) -> None:
        from agentenv_agents.api import LlmAgent

        self.model = LlmAgent({**model, "system_prompt": user_prompt(task), "max_turns": 1})
        self.done = False

    async def _say(self, agent_text: str) -> str:
        text = (await self.model.respond(agent_text, NoTools())).text.strip()
        self.done = ended(text)
        return text

    async def opening(self) -> str:
        return await self._say(GREETING)

    async def reply(self, agent_text: str) -> str:
        return await self._say(agent_text)


class SimulatedUser:
    """The resource a `tau2_user` step leaves: makes a fresh session per conversation."""

    def __init__(self, task: Tau2Task, kind: str, model: dict[str, Any] | None = None) -> None:
        self.task, self.kind, self.model = task, kind, model or {}

    def session(self) -> Session:
        if self.kind == "llm":
            return LlmSession(self.task, self.model)
        return ScriptedSession(self.task)
