"""The offline scripted simulated user: a deterministic customer made from a task's `user_scenario`.

It opens with the reason for the call and what it knows (τ²'s `reason_for_call` and `known_info`), answers a
question about identity (email, name, zip code, user id) with the known info, confirms an agent's request for
a yes/no with "yes", and ends with τ²'s stop token once the agent says it is done. It needs no model, so the
bundle and its RL episodes run offline; the `llm` user-sim keeps τ²'s conventions with a real model.
"""

from __future__ import annotations

import re

from agentenv_tau2.tasks import Tau2Task

STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
_IDENTITY = re.compile(r"\b(email|e-mail|zip|postal|name|user id|identif|verify|authenticat)", re.IGNORECASE)
_CONFIRM = re.compile(r"\b(confirm|proceed|yes/no|yes or no|shall i|should i|would you like)\b", re.IGNORECASE)
_DONE = re.compile(
    r"\b(anything else|is there anything|have a (great|nice|good) day|transferr?(ed|ing))\b", re.IGNORECASE
)


def opening_message(task: Tau2Task) -> str:
    """The customer's first message: who they are and why they call."""
    instructions = task.user_scenario.instructions
    parts = ["Hi!", instructions.reason_for_call.strip()]
    if instructions.known_info:
        parts.append(instructions.known_info.strip())
    return " ".join(part for part in parts if part)


class ScriptedUser:
    """Replies to the agent's messages; `done` once it has said the stop token."""

    def __init__(self, task: Tau2Task) -> None:
        self.task = task
        self.done = False

    def first(self) -> str:
        return opening_message(self.task)

    def reply(self, agent_text: str) -> str:
        if _DONE.search(agent_text):
            self.done = True
            return STOP
        if _IDENTITY.search(agent_text):
            known = self.task.user_scenario.instructions.known_info
            return (known or "I don't have that information.").strip()
        if _CONFIRM.search(agent_text):
            return "Yes, please go ahead."
        return "Okay. " + self.task.user_scenario.instructions.reason_for_call.strip()
