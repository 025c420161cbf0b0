"""Seeded batches: `agentenv run BUNDLE --seeds FILE.csv`, one batch row per CSV line.

The header names the columns. `seed` (optional) is the row's seed (else the base seed + the row's index);
`task` (optional) limits the row to one task; every other column is a named placeholder: `{{ name }}` in any
string field of a task's steps is replaced by the row's value. A field that is exactly one placeholder takes
the value as JSON when it reads as JSON (`89.99`, `true`), else as text, so numbers stay numbers.

A task's `[placeholders]` table gives defaults: a run without a seeds row fills them all (`with_defaults`),
and a row's columns win over them. Placeholders neither names are left alone (an agent policy's own
`{{ saved.x }}` templates keep working); a column that no selected task uses is refused, since it is most
likely a typo. Errors name the file, the row (its line), the field and the fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv_runtime.engine.task import PLACEHOLDER_NAME, StepDecl, TaskError, TaskFile

RESERVED = ("seed", "task")
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class SeedRow:
    """One row of a seeds file: where it is, its seed and task (if given) and its placeholder values."""

    index: int
    line: int
    seed: int | None = None
    task: str | None = None
    values: dict[str, str] = field(default_factory=dict)


def read_seeds(path: Path) -> list[SeedRow]:
    """The rows of a seeds CSV file; TaskError naming the file, row, field and fix."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise TaskError(f"--seeds {path}: no such file; fix: give the path of a CSV file with a header row") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"--seeds {path}: cannot read it ({exc}); save it as UTF-8 CSV") from None
    import csv  # only a seeded batch reads CSV

    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if not header or not any(cell.strip() for cell in header):
        raise TaskError(f"{path}: the file is empty; fix: a header row (e.g. `seed,customer`) and one row per run")
    names = [cell.strip() for cell in header]
    for column, name in enumerate(names, start=1):
        if not PLACEHOLDER_NAME.fullmatch(name):
            raise TaskError(
                f"{path}: line 1, column {column}: {name!r} is not a placeholder name; fix: use letters, digits "
                "and _ (starting with a letter), as in {{ name }}"
            )
    if dupes := sorted({n for n in names if names.count(n) > 1}):
        raise TaskError(f"{path}: line 1: column {', '.join(map(repr, dupes))} appears twice; fix: name each once")
    rows: list[SeedRow] = []
    for line, cells in enumerate(reader, start=2):
        if not cells or not any(cell.strip() for cell in cells):
            continue
        where = f"{path}: row {len(rows) + 1} (line {line})"
        if len(cells) != len(names):
            raise TaskError(
                f"{where}: {len(cells)} value(s) for {len(names)} column(s) ({', '.join(names)}); "
                "fix: one value per column (quote a value that holds a comma)"
            )
        values = dict(zip(names, cells, strict=True))
        seed_text = values.pop("seed", None)
        seed = None
        if seed_text is not None:
            try:
                seed = int(seed_text)
            except ValueError:
                raise TaskError(f"{where}: field `seed`: {seed_text!r} is not a whole number; fix: e.g. 7") from None
        task = values.pop("task", None) or None
        rows.append(SeedRow(len(rows), line, seed, task, values))
    if not rows:
        raise TaskError(f"{path}: the header has no rows under it; fix: add one row per run")
    return rows


def placeholders_of(task: TaskFile) -> set[str]:
    """Every `{{ name }}` in the task's step fields."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.update(_PLACEHOLDER.findall(value))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for step in task.steps:
        walk(step.fields)
    return found


def fill(value: Any, values: dict[str, str]) -> Any:
    """`value` with every `{{ name }}` of `values` replaced (a whole-field placeholder read as JSON if it is)."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value.strip())
        if whole and whole.group(1) in values:
            raw = values[whole.group(1)]
            try:
                return json.loads(raw)
            except ValueError:
                return raw
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {key: fill(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [fill(item, values) for item in value]
    return value


def filled_task(task: TaskFile, values: dict[str, str]) -> TaskFile:
    """A copy of `task` whose step fields have the row's values, then the task's defaults (the file is untouched)."""
    defaults = {name: v if isinstance(v, str) else json.dumps(v) for name, v in task.placeholders.items()}
    values = {**defaults, **values}
    if not values:
        return task
    steps = [
        StepDecl.model_validate({**step.model_dump(by_alias=True, exclude_none=True), **fill(step.fields, values)})
        for step in task.steps
    ]
    return task.model_copy(update={"steps": steps})


def with_defaults(task: TaskFile) -> TaskFile:
    """`task` with its `[placeholders]` defaults filled in: what a run without a seeds row runs."""
    return filled_task(task, {})


def check_columns(path: Path, rows: list[SeedRow], tasks: list[TaskFile]) -> None:
    """Refuse a column no selected task uses, and a row naming a task that is not selected."""
    used = set().union(*(placeholders_of(t) for t in tasks))
    names = {t.name for t in tasks}
    columns = set(rows[0].values)
    if unused := sorted(columns - used):
        raise TaskError(
            f"{path}: line 1: column(s) {', '.join(map(repr, unused))} fill no {{{{ name }}}} placeholder in "
            f"the selected task(s) ({', '.join(sorted(names))}); fix: rename the column to a placeholder the "
            "tasks use, or remove it"
        )
    for row in rows:
        if row.task is not None and row.task not in names:
            raise TaskError(
                f"{path}: row {row.index + 1} (line {row.line}): field `task`: {row.task!r} is not a selected task "
                f"({', '.join(sorted(names))}); fix: name one of them, or leave `task` empty for every task"
            )
