"""`agentenv plugin new NAME --kind KIND [--dir D]`: scaffold a plugin distribution that passes its own tests.

A sub-command of the kernel's `plugin` group, brought by the runtime (`CliCommand("plugin new", …)`): the
templates need the runtime's versions and SDK, and the kernel has no room to spare.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from agentenv import fail

from agentenv_runtime.scaffold import KINDS, ScaffoldError, next_steps, scaffold

app = typer.Typer(add_completion=False, help="Scaffold a plugin distribution.")


@app.command()
def new(
    name: Annotated[str, typer.Argument(help="The plugin's name: lower-case letters, digits and '_' (e.g. phone).")],
    kind: Annotated[str, typer.Option("--kind", "-k", help=f"What it contributes: {', '.join(KINDS)}.")],
    folder: Annotated[
        Path | None, typer.Option("--dir", "-d", help="Where to write it (default: ./agentenv-NAME; must be new).")
    ] = None,
) -> None:
    """Write pyproject, README, CHANGELOG, the entry module, one working example contribution and its tests."""
    try:
        target, written = scaffold(kind, name, folder)
    except ScaffoldError as exc:
        fail(str(exc), 2)
    print(f"Wrote {len(written)} files to {target}:")
    for path in written:
        print(f"  {path}")
    print(f"\nNext: {next_steps(target)}")
