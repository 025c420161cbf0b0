"""τ²-bench's retail tasks and splits, read from the package's `data/` folder and checked field by field.

The models keep only what grading and the simulated user read; a task file that lacks one of those fields, or
gives it the wrong type, is refused with the file, the task and the field in the message.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

REWARD_TYPES = ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")


class TaskDataError(ValueError):
    """A task file τ² could not read either; the message names the file, task and field."""


class GoldAction(BaseModel):
    model_config = ConfigDict(extra="ignore")

    action_id: str
    requestor: str = "assistant"
    name: str
    arguments: dict[str, Any]
    compare_args: list[str] | None = None

    def matches(self, tool: str, arguments: dict[str, Any]) -> bool:
        """τ²'s `Action.compare_with_tool_call`: same name, and equal values on `compare_args` (all of the call's
        arguments when None; nothing more when empty)."""
        if tool != self.name:
            return False
        keys = list(arguments) if self.compare_args is None else self.compare_args
        if not keys:
            return True
        return {k: v for k, v in arguments.items() if k in keys} == {
            k: v for k, v in self.arguments.items() if k in keys
        }


class Criteria(BaseModel):
    model_config = ConfigDict(extra="ignore")

    actions: list[GoldAction] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[str] = Field(default_factory=lambda: ["DB", "COMMUNICATE"])


class Instructions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task_instructions: str = ""
    domain: str = "retail"
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | None = None


class Scenario(BaseModel):
    model_config = ConfigDict(extra="ignore")

    persona: str | None = None
    instructions: Instructions


class Tau2Task(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    user_scenario: Scenario
    evaluation_criteria: Criteria | None = None

    @property
    def gold_actions(self) -> list[GoldAction]:
        return list(self.evaluation_criteria.actions or []) if self.evaluation_criteria else []

    @property
    def writes(self) -> bool:
        """Whether a gold action changes the database (so doing nothing fails the `db` component)."""
        from agentenv_retail.api import RetailEnv

        specs = RetailEnv.tool_specs()
        return any(a.name in specs and not specs[a.name].read_only for a in self.gold_actions)


def data_file(name: str) -> Path:
    return Path(str(resources.files("agentenv_tau2").joinpath("data", name)))


def parse_tasks(raw: Any, source: str) -> dict[str, Tau2Task]:
    """Tasks by id from τ²'s `tasks.json` content; a clear error for the first malformed one."""
    if not isinstance(raw, list):
        raise TaskDataError(f"{source}: the top level must be a list of tasks")
    tasks: dict[str, Tau2Task] = {}
    for index, item in enumerate(raw):
        label = f"task {item.get('id')!r}" if isinstance(item, dict) and "id" in item else f"[{index}]"
        try:
            task = Tau2Task.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "task"
            raise TaskDataError(f"{source}: {label}: field `{where}`: {first['msg']}") from None
        unknown = [
            b
            for b in (task.evaluation_criteria.reward_basis if task.evaluation_criteria else [])
            if b not in REWARD_TYPES
        ]
        if unknown:
            raise TaskDataError(
                f"{source}: {label}: field `evaluation_criteria.reward_basis`: unknown {unknown[0]!r} "
                f"(one of {', '.join(REWARD_TYPES)})"
            )
        tasks[task.id] = task
    return tasks


@functools.cache
def retail_tasks() -> dict[str, Tau2Task]:
    path = data_file("tasks.json")
    return parse_tasks(json.loads(path.read_text(encoding="utf-8")), str(path))


def retail_task(task_id: str) -> Tau2Task:
    tasks = retail_tasks()
    if task_id not in tasks:
        raise TaskDataError(f"{data_file('tasks.json')}: no τ² retail task {task_id!r} (ids 0..{len(tasks) - 1})")
    return tasks[task_id]


@functools.cache
def retail_splits() -> dict[str, list[str]]:
    """τ²'s named task sets: `train`, `test` and `base` (all)."""
    path = data_file("split_tasks.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(name): [str(i) for i in ids] for name, ids in data.items()}
