"""`agentenv task`: task file tools (the JSON Schema that editors use to complete and check task files)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main
from agentenv import get_host
from agentenv.contracts import kinds
from typer.core import TyperGroup

from agentenv_runtime.engine.task import task_json_schema


class _FormatGroup(TyperGroup):
    """`agentenv task import [FORMAT] SOURCE …`: FORMAT is a sub-command (`reference`, or one a plugin declares
    as `CliCommand("task import NAME", …)`, e.g. agentenv-workspace's `harbor` and `swe`); without a known FORMAT
    the arguments are a reference task file, as before formats existed. (`Any` for click's types: typer
    vendors its own click, whose classes are private.)"""

    def _declared(self) -> dict[str, str]:
        prefix = "task import "
        entries = get_host().registry(kinds.CLI_COMMANDS).items()
        return {name[len(prefix):]: entry.obj.target for name, entry in entries if name.startswith(prefix)}

    def list_commands(self, ctx: Any) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._declared()})

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        target = None if found else self._declared().get(cmd_name)
        if target is None:
            return found
        import importlib

        module, _, attribute = target.partition(":")
        command = typer.Typer(add_completion=False)
        command.command(name=cmd_name)(getattr(importlib.import_module(module), attribute))
        return typer.main.get_command(command)

    def resolve_command(
        self, ctx: Any, args: list[str]
    ) -> tuple[str | None, Any, list[str]]:
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            return "reference", self.get_command(ctx, "reference"), args
        return super().resolve_command(ctx, args)


app = typer.Typer(help="Task file tools.", no_args_is_help=True, add_completion=False)
importer = typer.Typer(
    cls=_FormatGroup, no_args_is_help=True, add_completion=False,
    help="Write our task (or bundle) from another project's: `reference FILE`, or a format a plugin adds "
    "(`harbor DIR`, `swe FILE` with agentenv-workspace). A bare FILE is a reference task file.",
)  # fmt: skip
app.add_typer(importer, name="import")


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


@importer.command("reference")
def import_task(
    file: Annotated[Path, typer.Argument(help="A task file of the reference AgentEnv implementation (JSON array).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write our task file (.toml or .json).")],
    name: Annotated[str | None, typer.Option(help="Task name (default: the file's stem).")] = None,
) -> None:
    """Convert a reference task file into ours, naming every field that has no counterpart (exit 1 if any).

    Entity names (`env_id`, `agent_name`, `sandbox_name`, `prompt_id`, `verifier_id`) become the ids of the
    steps that deploy them; `{"task_step_id": …}` dependencies become step ids. Run the result with
    `agentenv run OUT` (in the bundle folder, so relative paths resolve).
    """
    import json

    from agentenv import fail

    from agentenv_runtime.engine.importer import ReferenceTaskError, import_reference_task

    try:
        steps = json.loads(file.read_text(encoding="utf-8"))
        imported = import_reference_task(steps, name=name or file.stem, source=str(file))
    except OSError as exc:
        fail(f"{file}: cannot read it ({exc.strerror})", code=2)
        return
    except json.JSONDecodeError as exc:
        fail(f"{file}: not valid JSON ({exc})", code=2)
        return
    except ReferenceTaskError as exc:
        fail(str(exc), code=2)
        return
    if out.suffix == ".json":
        text = json.dumps(imported.task, indent=2) + "\n"
    else:
        import tomli_w

        text = tomli_w.dumps(imported.task)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} ({len(imported.task['steps'])} steps)", file=sys.stderr)
    for line in imported.notes:
        print(f"note: {file}: {line}", file=sys.stderr)
    for line in imported.unmapped:
        print(f"not mapped: {file}: {line}", file=sys.stderr)
    if imported.unmapped:
        print(f"{file}: {_count(imported.unmapped)} not mapped ({len(imported.notes)} mapped approximately); {out} "
              "holds the rest. Give each its agentenv counterpart in "
              f"{out} by hand, or drop it from {file}: `agentenv run {file}` refuses it until then", file=sys.stderr)
        raise typer.Exit(1)


def _count(unmapped: list[str]) -> str:
    """`N item(s) of M step(s)`: the import's summary, from lines that start `step 'ID' (TYPE)`."""
    steps = {line.split(":", 1)[0] for line in unmapped}
    return f"{len(unmapped)} item(s) of {len(steps)} step(s)"
