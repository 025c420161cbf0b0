"""Step references that point the wrong way: a field naming a step that does not run before its own step.

A step's `env = "world"` or `agent = "greeter"` needs what that step made, so the named step must be one it
depends on. A task that names a step declared later (or one its explicit `depends_on` leaves out) would fail
mid-run with "no output yet" or "no resource", after other steps had started. Which fields name steps is the
step type's knowledge, not the engine's: its preflight reports an id it cannot find among `step_ids`. So
for each step id a field's value mentions and that does not run first, the engine asks the step's preflight
again without that id; a problem that then appears is a reference to it, and is reported as such.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agentenv.contracts import Step
from pydantic import BaseModel

from agentenv_runtime.engine.task import StepDecl, TaskFile, ancestors

TEMPLATE_ROOT = re.compile(r"\{\{\s*([A-Za-z0-9_.-]+?)\s*(?:\.|\}\})")
"""The step id a `{{ step.path }}` template starts with."""


def mentioned(value: Any) -> Iterator[str]:
    """Every string of a task field's value (nested lists and tables, their keys) and each template's root."""
    if isinstance(value, str):
        yield value
        yield from TEMPLATE_ROOT.findall(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from mentioned(item)
    elif isinstance(value, list):
        for item in value:
            yield from mentioned(item)


def order_problems(task: TaskFile, planned: dict[str, tuple[Step[Any], BaseModel]]) -> list[str]:
    """One line per field that names a step which does not run before the field's own step."""
    ids = [s.id for s in task.steps]
    position = {step_id: index for index, step_id in enumerate(ids)}
    graph = Graph(task)
    problems: list[str] = []
    for index, decl in enumerate(task.steps):
        if decl.id not in planned:
            continue
        named = {other for other in mentioned(decl.fields) if other in position and other != decl.id}
        # the usual case, a step without `depends_on` naming an earlier one, needs no graph walk
        suspects = [o for o in named if decl.depends_on is not None or position[o] > index]
        for other in sorted(suspects, key=position.__getitem__):
            if graph.runs_before(other, decl.id):
                continue
            step, settings = planned[decl.id]
            where = f"{task.path}: step {decl.id!r} ({decl.type})"
            for field in referring_fields(step, settings, ids, other):
                problems.append(f"{where}: field `{field}`: {why(decl, other, position)}")
    return problems


class Graph:
    """Which steps wait for which, asked from the named step's side: a task names few steps (its worlds, its
    agents) many times, so each one's followers are found once, in one walk (a 1,000-step chain stays linear)."""

    def __init__(self, task: TaskFile) -> None:
        self.task = task
        self.followers: dict[str, list[str]] | None = None
        self.after: dict[str, set[str]] = {}

    def runs_before(self, first: str, then: str) -> bool:
        """Whether step `then` depends on step `first`, directly or through others."""
        if first not in self.after:
            if self.followers is None:
                self.followers = {}
                for step_id, deps in self.task.deps().items():
                    for dep in deps:
                        self.followers.setdefault(dep, []).append(step_id)
            self.after[first] = ancestors(self.followers, first)
        return then in self.after[first]


def referring_fields(step: Step[Any], settings: BaseModel, ids: list[str], other: str) -> list[str]:
    """The fields whose preflight problems appear only when step `other` is missing from the task."""
    try:  # the step type's own code: preflight already named it when it raises
        known = set(step.preflight(settings, ids))
        without = step.preflight(settings, [step_id for step_id in ids if step_id != other])
    except Exception:
        return []
    return list(dict.fromkeys(field for field, message in without if (field, message) not in known))


def why(decl: StepDecl, other: str, position: dict[str, int]) -> str:
    if position[other] > position[decl.id]:
        return (
            f"step {other!r} is declared after this one and does not run before it; "
            f"fix: declare step {other!r} before step {decl.id!r}"
        )
    return (
        f"step {other!r} does not run before this one (this step's `depends_on` leaves it out, so the two may run "
        f"at once); fix: add {other!r} to `depends_on`"
    )
