"""`agentenv bundle export`: a self-contained bundle to run on another install; `bundle schema`: the JSON
Schemas of its `bundle.toml` and eval files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from agentenv import fail, get_host, print_json

from agentenv_runtime.engine.task import TaskError
from agentenv_runtime.export import export_bundle
from agentenv_runtime.sources import find_any_bundle

HELP = "Bundle tools: export a self-contained copy; the schema of bundle.toml and evals."
app = typer.Typer(help=HELP, no_args_is_help=True, add_completion=False)


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


@app.command("schema")
def schema(
    of: Annotated[str, typer.Argument(help="bundle (bundle.toml) or eval (evals/NAME.toml).")] = "bundle",
    output: Annotated[Path | None, typer.Option("-o", help="Write to this file.")] = None,
) -> None:
    """The JSON Schema of `bundle.toml` or of an eval file, for editors (`agentenv task schema`: task files)."""
    import json
    import sys

    from pydantic import BaseModel

    from agentenv_runtime.engine.bundle import BundleManifest
    from agentenv_runtime.engine.evals import EvalFile

    models: dict[str, type[BaseModel]] = {"bundle": BundleManifest, "eval": EvalFile}
    if of not in models:
        fail(f"bundle schema: {of!r} is not a bundle file; give `bundle` (bundle.toml) or `eval` (evals/NAME.toml)")
    found = models[of].model_json_schema()
    found["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    text = json.dumps(found, indent=2)
    if output:
        output.write_text(text + "\n")
        print(f"wrote {output}", file=sys.stderr)
    else:
        print(text)
