"""Evals: named task sets of a bundle, `evals/NAME.toml`, run with `agentenv run BUNDLE --eval NAME`.

An eval names its tasks and how to run them: rollouts per task (`k`), how many runs at a time
(`concurrency`), a base `seed`, an optional seeded batch (`seeds`, a CSV file of the bundle), and per-task
overrides (`[overrides.TASK]`: `k`, `seed`, `agent`, `model`, `sandbox`). Every mistake is reported with the
file, the field and the fix before anything runs.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

from agentenv_runtime.engine.bundle import Bundle
from agentenv_runtime.engine.task import TaskError, read_task


class TaskOverride(BaseModel):
    """What one task of an eval runs with, over the eval's own settings."""

    model_config = ConfigDict(extra="forbid")

    k: int | None = Field(None, ge=1, description="Rollouts of this task.")
    seed: int | None = Field(None, description="Base seed of this task's rollouts.")
    agent: str | None = Field(None, min_length=1, description="Agent: a bundle agent file name or an agent kind.")
    model: str | None = Field(None, min_length=1, description="Model for llm agents and judges.")
    sandbox: str | None = Field(None, min_length=1, description="Where deployed worlds run.")

    def run_overrides(self) -> dict[str, Any]:
        """The ones that go to the run as `--agent`/`--model`/`--sandbox` would."""
        return {key: value for key in ("agent", "model", "sandbox") if (value := getattr(self, key))}


class EvalFile(BaseModel):
    """`evals/NAME.toml`: a named task set of the bundle and how to run it (`agentenv run BUNDLE --eval NAME`)."""

    model_config = ConfigDict(extra="forbid", title="agentenv eval")

    description: str = Field("", description="One line on what the eval measures.")
    tasks: list[str] = Field(min_length=1, description="Task names of the bundle.")
    k: int = Field(1, ge=1, description="Rollouts per task.")
    concurrency: int = Field(1, ge=1, le=256, description="Runs at a time.")
    seed: int | None = Field(None, description="Base seed (rollout i uses seed + i).")
    seeds: str | None = Field(None, min_length=1, description="A seeds CSV file of the bundle: one batch row a line.")
    overrides: dict[str, TaskOverride] = Field(default_factory=dict, description="Task name → its overrides.")
    path: SkipJsonSchema[Path] = Field(Path("<memory>"), exclude=True)  # where it was read from, not a field


def eval_files(bundle: Bundle) -> dict[str, Path]:
    folder = bundle.path / "evals"
    return {p.stem: p for p in sorted(folder.glob("*.toml"))} if folder.is_dir() else {}


def read_eval(bundle: Bundle, name: str) -> EvalFile:
    """The bundle's eval `name`, checked against its tasks; TaskError naming file, field and fix."""
    files = eval_files(bundle)
    if name not in files:
        known = ", ".join(files) or "none"
        raise TaskError(
            f"--eval {name}: bundle {bundle.name!r} has no eval {name!r} (evals: {known}); "
            f"fix: add {bundle.path / 'evals' / f'{name}.toml'} with `tasks = [...]`"
        )
    path = files[name]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"{path}: cannot read the eval ({exc}); save it as UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{path}: invalid TOML: {exc}") from None
    try:
        spec = EvalFile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            field = ".".join(str(p) for p in err["loc"]) or "(file)"
            fix = (
                "remove it (fields: " + ", ".join(_fields_at(err["loc"])) + ")"
                if err["type"] == "extra_forbidden"
                else err["msg"]
            )
            problems.append(f"{path}: field `{field}`: {fix}")
        raise TaskError("\n".join(problems)) from None
    spec.path = path
    names = set(bundle.task_files())
    if not set(spec.tasks) <= names:  # a task may be named by its `name` rather than its file's
        names |= {read_task(p).name for p in bundle.task_files().values()}
    problems = [
        f"{path}: field `tasks`: bundle {bundle.name!r} has no task {task!r} (tasks: {', '.join(sorted(names))})"
        for task in spec.tasks
        if task not in names
    ]
    problems += [
        f"{path}: field `overrides.{task}`: {task!r} is not in `tasks`; override only tasks the eval runs"
        for task in spec.overrides
        if task not in spec.tasks
    ]
    if problems:
        raise TaskError("\n".join(problems))
    return spec


def _fields_at(loc: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] = TaskOverride if loc and loc[0] == "overrides" else EvalFile
    return [name for name in model.model_fields if name != "path"]
