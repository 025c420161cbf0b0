"""Which agent `--agent` puts where: `NAME` replaces every agent of a task, `ROLE=NAME` only the one acting as ROLE.

A multi-agent task (two players, an agent and its simulated counterpart) needs one choice per role; a bare name
still replaces them all, and a role's own choice wins over it. The choices travel as one text, parts joined by
commas (the run override `agent`, an eval's `agent`, the run record's `agent`), so they are stored and filtered
like a single name.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentenv_runtime.engine.task import TaskError

EVERY_ROLE = ""
"""The key of the choice without a role (it applies to every agent)."""


def agent_choices(value: str | None) -> dict[str, str]:
    """Role (EVERY_ROLE for a bare name) → agent kind or policy file; a TaskError for a part given twice."""
    choices: dict[str, str] = {}
    for part in (value or "").split(","):
        role, _, name = part.strip().rpartition("=")
        if not name:
            continue
        if role in choices:
            which = f"role {role!r}" if role else "every role (a name without ROLE=)"
            raise TaskError(f"--agent {value}: two choices for {which}; give one --agent per role")
        choices[role] = name
    return choices


def join_agent_choices(values: Iterable[str]) -> str | None:
    """What several `--agent` options mean, as one override text (checked: one choice per role)."""
    joined = ",".join(value.strip() for value in values if value.strip())
    agent_choices(joined)
    return joined or None


def agent_for_role(value: str | None, role: str) -> str | None:
    """The agent chosen for the agent acting as `role`: its own choice, else the one for every role, else None."""
    choices = agent_choices(value)
    return choices.get(role) or choices.get(EVERY_ROLE)
