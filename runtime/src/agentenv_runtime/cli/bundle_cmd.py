"""`agentenv bundle export`: a self-contained bundle to run on another install."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from agentenv import fail, get_host, print_json

from agentenv_runtime.engine.task import TaskError
from agentenv_runtime.export import export_bundle
from agentenv_runtime.sources import find_any_bundle

app = typer.Typer(help="Bundle tools: export a self-contained copy.", no_args_is_help=True, add_completion=False)


@app.callback()
def bundle() -> None:
    """Bundle tools (a group, so that `export` stays a sub-command when more join it)."""


@app.command("export")
def export(
    target: Annotated[str, typer.Argument(help="Bundle folder, installed bundle name, or registry://NAME@VERSION.")],
    out: Annotated[Path, typer.Option("--out", help="A new folder, or FILE.tar.gz.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """Copy the bundle with its artifacts inside, artifact hashes pinned and plugin versions recorded."""
    host = get_host()
    try:
        summary = export_bundle(find_any_bundle(target, host), out, host)
    except TaskError as exc:
        fail(str(exc))
    if as_json:
        print_json(summary)
        return
    print(f"exported {summary['bundle']} → {summary['out']} ({len(summary['artifacts'])} artifacts pinned)")
