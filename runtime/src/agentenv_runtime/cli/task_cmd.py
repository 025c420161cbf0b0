"""`agentenv task`: task file tools (the JSON Schema that editors use to complete and check task files)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from agentenv.contracts import kinds
from agentenv.plugins.host import get_host

from agentenv_runtime.engine.task import task_json_schema

app = typer.Typer(help="Task file tools.", no_args_is_help=True, add_completion=False)


@app.callback()
def _task_group() -> None:
    """Task file tools (a callback keeps `task` a group: without one typer runs `schema` as `agentenv task`)."""


@app.command("schema")
def schema(output: Annotated[Path | None, typer.Option("-o", help="Write to this file.")] = None) -> None:
    """The JSON Schema of task files, with every installed step type's fields."""
    import json

    models = {name: entry.obj.Settings for name, entry in get_host().usable(kinds.STEPS).items()}
    text = json.dumps(task_json_schema(models), indent=2)
    if output:
        output.write_text(text + "\n")
        print(f"wrote {output}", file=sys.stderr)
    else:
        print(text)
