"""Task files: a DAG of steps in TOML or JSON, validated before anything runs.

Common step fields: `id`, `type`, `depends_on` (absent = after every earlier step), `fail_task_on_error`
(default true) and `retry` (`{from = STEP, times = N}`: on failure, roll the worlds back to just before
STEP and run again from there, up to N times). Everything else is the step type's own fields.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentenv_runtime.world.arguments import ArgumentLimits, argument_problem

TASK_TEXT_LIMITS = ArgumentLimits(max_depth=100, max_string=10_000_000)
"""What a task file's values may hold: text without NUL or lone surrogates, nested at most 100 deep."""


class TaskError(ValueError):
    """A task that cannot run; the message names the file, the step id and the field."""


class RetrySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
    from_: str = Field(alias="from", description="The earlier step to run again from.")
    times: int = Field(1, ge=1, le=100, description="How many extra attempts.")


class StepDecl(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="Unique step id.")
    type: str = Field(description="The step type (see `agentenv steps list`).")
    depends_on: list[str] | None = Field(None, description="Step ids this waits for; absent = every earlier step.")
    fail_task_on_error: bool = Field(True, description="A failure of this step fails the task.")
    retry: RetrySpec | None = None

    @property
    def fields(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class Pins(BaseModel):
    model_config = ConfigDict(extra="forbid")
    plugins: dict[str, str] = Field(default_factory=dict, description="Distribution → version range.")
    artifacts: dict[str, str] = Field(default_factory=dict, description="`env/name` → sha256 (or a prefix).")
    agent: str | None = None


PLACEHOLDER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A `{{ name }}` placeholder's name (a seeds file's column, a `[placeholders]` key)."""


class TaskFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str = ""
    seed: int | None = None
    pass_threshold: float = Field(1.0, ge=0, le=1, description="Score needed to pass (graded tasks).")
    pins: Pins = Field(default_factory=Pins)
    placeholders: dict[str, Any] = Field(
        default_factory=dict,
        description="Defaults of the steps' `{{ name }}` placeholders, for runs without a seeds row (a row's "
        "columns win).",
    )
    steps: list[StepDecl] = Field(min_length=1)
    path: Path = Field(Path("<memory>"), exclude=True)

    @field_validator("placeholders")
    @classmethod
    def _placeholder_names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            if not PLACEHOLDER_NAME.fullmatch(name):
                raise ValueError(
                    f"{name!r} is not a placeholder name; fix: letters, digits and _, not starting with a digit "
                    "(as in {{ customer }})"
                )
        return value

    def deps(self) -> dict[str, list[str]]:
        ids = [s.id for s in self.steps]
        return {s.id: list(s.depends_on) if s.depends_on is not None else ids[:i] for i, s in enumerate(self.steps)}


def read_task(path: Path) -> TaskFile:
    """Parse and structurally validate a task file (step types are checked at preflight)."""
    shown = printable_path(path)
    if shown != str(path):  # the path lands in run records, which must be valid text
        raise TaskError(f"{shown}: the task file's path is not valid UTF-8; rename the file or its folder")
    kind = "JSON" if path.suffix == ".json" else "TOML"
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except OSError as exc:
        raise TaskError(f"{path}: cannot read task file ({exc.strerror})") from None
    except (ValueError, tomllib.TOMLDecodeError) as exc:  # UnicodeDecodeError included: not UTF-8
        raise TaskError(f"{path}: not valid {kind}: {exc}") from None
    except RecursionError:
        raise TaskError(f"{path}: not valid {kind}: nested too deep") from None
    if isinstance(data, list):  # the reference implementation's task file: a JSON array of steps
        data = _imported(path, data)
    if not isinstance(data, dict):
        raise TaskError(f"{path}: the top level must be an object with `name` and `steps`, not a {kind} array/value")
    problem = argument_problem(data, TASK_TEXT_LIMITS)
    if problem is not None:  # a NUL or lone surrogate would break the run record and every printout
        raise TaskError(f"{path}: field `{problem['field']}`: {problem['errors'][0]['message']}")
    data.pop("$schema", None)
    try:
        task = TaskFile.model_validate(data)
    except ValidationError as exc:
        raise TaskError("\n".join(_where(path, data, err) for err in exc.errors(include_url=False))) from exc
    task.path = path
    check_graph(task)
    return task


def _imported(path: Path, steps: list[Any]) -> dict[str, Any]:
    """A reference task file as ours; refused while any of its fields has no counterpart (each is named)."""
    from agentenv_runtime.engine.importer import ReferenceTaskError, read_reference_task

    try:
        imported = read_reference_task(path, steps)
    except ReferenceTaskError as exc:
        raise TaskError(str(exc)) from exc
    if imported.unmapped:
        lines = "\n".join(f"{path}: {line}" for line in imported.unmapped)
        raise TaskError(f"{lines}\n{path}: a reference task file; see `agentenv task import {path} --out task.toml`")
    return imported.task


def _where(path: Path, data: dict[str, Any], err: Any) -> str:
    loc = list(err["loc"])
    if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int):
        steps = data.get("steps") or []
        step_id = steps[loc[1]].get("id", "?") if loc[1] < len(steps) and isinstance(steps[loc[1]], dict) else "?"
        field = ".".join(str(p) for p in loc[2:]) or "(step)"
        return f"{path}: step {step_id!r} (steps[{loc[1]}]): field `{field}`: {err['msg']}"
    return f"{path}: field `{'.'.join(str(p) for p in loc)}`: {err['msg']}"


def check_graph(task: TaskFile) -> None:
    """Unique ids, known dependencies, retry targets that come before the step, no cycles."""
    problems: list[str] = []
    ids = [s.id for s in task.steps]
    seen: set[str] = set()
    for step in task.steps:
        if step.id in seen:
            problems.append(f"step {step.id!r}: field `id`: duplicate step id")
        seen.add(step.id)
    deps = task.deps()
    for step in task.steps:
        for dep in step.depends_on or []:
            if dep not in ids:
                problems.append(f"step {step.id!r}: field `depends_on`: no step {dep!r} (steps: {', '.join(ids)})")
        if step.retry and step.retry.from_ not in ancestors(deps, step.id) | {step.id}:
            problems.append(
                f"step {step.id!r}: field `retry.from`: {step.retry.from_!r} is not this step or one it depends on"
            )
    if not problems and (cycle := find_cycle(deps)):
        problems.append(f"field `depends_on`: steps form a cycle: {' → '.join(cycle)}")
    if problems:
        raise TaskError("\n".join(f"{task.path}: {p}" for p in problems))


def ancestors(deps: dict[str, list[str]], step_id: str) -> set[str]:
    found: set[str] = set()
    stack = list(deps.get(step_id, []))
    while stack:
        current = stack.pop()
        if current not in found:
            found.add(current)
            stack.extend(deps.get(current, []))
    return found


def find_cycle(deps: dict[str, list[str]]) -> list[str] | None:
    """A cycle of the graph as a path of ids, or None. Iterative depth-first search: a chain of thousands
    of steps cannot exhaust the stack."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for root in deps:
        if root in state:
            continue
        path: list[str] = [root]
        pending = [iter(deps.get(root, []))]
        state[root] = 1
        while pending:
            dep = next(pending[-1], None)
            if dep is None:
                state[path.pop()] = 2
                pending.pop()
            elif state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            elif dep not in state:
                state[dep] = 1
                path.append(dep)
                pending.append(iter(deps.get(dep, [])))
    return None


def printable_path(path: Path) -> str:
    """`path` as text; bytes that are not UTF-8 (kept by the OS as surrogate escapes) shown as U+FFFD."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def task_json_schema(step_models: dict[str, type[BaseModel]]) -> dict[str, Any]:
    """A JSON Schema for task files, with each installed step type's own fields (for editors)."""
    schema = TaskFile.model_json_schema(by_alias=True)
    common = StepDecl.model_json_schema(by_alias=True)
    variants = []
    for name, model in sorted(step_models.items()):
        own = model.model_json_schema(by_alias=True)
        props = {**own.get("properties", {}), **common["properties"], "type": {"const": name}}
        variants.append(
            {
                "type": "object",
                "properties": props,
                "required": ["id", "type", *own.get("required", [])],
                "additionalProperties": False,
                "description": model.__doc__ or name,
            }
        )
        schema.setdefault("$defs", {}).update(own.get("$defs", {}))
    if variants:
        schema["properties"]["steps"] = {"type": "array", "minItems": 1, "items": {"anyOf": variants}}
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "agentenv task"
    schema["properties"]["$schema"] = {"type": "string"}
    schema["properties"].pop("path", None)  # where the file was read from, not a field of the file
    return schema
