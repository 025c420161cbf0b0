"""`agentenv config show`: the resolved configuration, each value's source, secrets masked."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from agentenv.cli.output import fail, print_json, print_table
from agentenv.config import ConfigError, display_value, load_config

app = typer.Typer(help="Show the resolved configuration.", no_args_is_help=True, add_completion=False)


@app.callback()
def _config_group() -> None:
    """Configuration (a callback keeps `config` a group of sub-commands)."""


@app.command("show")
def show(as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False) -> None:
    """Print every setting, where it came from (a file or the defaults), with secrets masked."""
    try:
        config = load_config()
    except ConfigError as exc:
        fail(str(exc))
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    rows = [(key, display_value(key, raw, os.environ), source) for key, raw, source in config.flat()]
    if as_json:
        values = [{"key": k, "value": v, "source": s} for k, v, s in rows]
        print_json({"file": str(config.file) if config.file else None, "values": values, "warnings": config.warnings})
        return
    print(f"config file: {config.file or '(none: local defaults)'}")
    print_table(("KEY", "VALUE", "SOURCE"), rows)
