"""`agentenv steps …`: the step types installed plugins provide, and each one's fields."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from agentenv import fail, get_host, print_json, print_table
from agentenv.contracts import kinds

app = typer.Typer(help="Installed step types and their fields.", no_args_is_help=True, add_completion=False)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "").replace("Optional[", "None | [")


def _fields(step: Any) -> list[dict[str, Any]]:
    schema = step.Settings.model_json_schema()
    required = set(schema.get("required", []))
    rows = []
    for name, field in step.Settings.model_fields.items():
        prop = schema.get("properties", {}).get(name, {})
        rows.append(
            {
                "name": name,
                "type": _type_name(field.annotation),
                "required": name in required,
                "default": None if name in required else prop.get("default"),
                "description": field.description or "",
            }
        )
    return rows


@app.command("list")
def list_steps(as_json: JsonFlag = False) -> None:
    """Every installed step type: name, distribution, version, description."""
    host = get_host()
    rows = []
    for name, entry in sorted(host.usable(kinds.STEPS).items()):
        info = host.find(entry.plugin)
        rows.append(
            {
                "name": name,
                "distribution": entry.dist,
                "version": info.version if info else "",
                "description": entry.obj.description,
                "verifier": entry.obj.verifier,
            }
        )
    if as_json:
        print_json(rows)
        return
    if not rows:
        print("No step types installed. Add some: agentenv plugin add agentenv-steps")
        return
    print_table(
        ("STEP", "DISTRIBUTION", "VERSION", "DESCRIPTION"),
        [(r["name"], r["distribution"], r["version"], r["description"]) for r in rows],
    )


@app.command("show")
def show(name: Annotated[str, typer.Argument(help="Step type name.")], as_json: JsonFlag = False) -> None:
    """One step type's fields: type, default, description."""
    steps = get_host().registry(kinds.STEPS)
    if name not in steps:
        fail(f"no step type {name!r}; see `agentenv steps list`")
        return
    entry = steps[name]
    fields = _fields(entry.obj)
    # A step that takes trigger definitions (register_env_triggers) also shows what each kind's `when` takes.
    triggers = _trigger_kinds() if "triggers" in entry.obj.Settings.model_fields else {}
    if as_json:
        shown = {"name": name, "distribution": entry.dist, "description": entry.obj.description}
        print_json({**shown, "verifier": entry.obj.verifier, "fields": fields, "trigger_kinds": triggers})
        return
    print(f"{name}  ({entry.dist}){'  [verifier]' if entry.obj.verifier else ''}\n  {entry.obj.description}\n")
    print_table(("FIELD", "TYPE", "DEFAULT", "DESCRIPTION"), [_row(f) for f in fields])
    print("\nEvery step also takes: id, type, depends_on, fail_task_on_error, retry.")
    for kind, about in triggers.items():
        print(f"\nTrigger kind `{kind}` ({about['distribution']}): {about['description']}  Its `when` fields:")
        print_table(("FIELD", "TYPE", "DEFAULT", "DESCRIPTION"), [_row(f) for f in about["when"]])


def _row(field: dict[str, Any]) -> tuple[str, str, str, str]:
    default = "(required)" if field["required"] else repr(field["default"])
    return field["name"], field["type"], default, field["description"]


def _trigger_kinds() -> dict[str, dict[str, Any]]:
    """Installed trigger kinds: distribution, description and the fields of their `when` table."""
    kinds_ = get_host().usable(kinds.TRIGGER_KINDS)
    return {
        name: {"distribution": e.dist, "description": e.obj.description, "when": _fields(e.obj)}
        for name, e in sorted(kinds_.items())
    }
