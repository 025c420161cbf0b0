"""CLI command contributions. Kept free of pydantic so `agentenv --help` stays fast."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CliCommand:
    """A sub-command `agentenv NAME`.

    `target` is `"package.module:attribute"` naming a `typer.Typer` app (or a plain function, which is
    wrapped in one); with `argv=True` it names a function that takes the argument list and returns the exit
    code (for commands whose start-up cannot afford typer), which runs with the cyclic garbage collector off
    until it calls `agentenv.collect_garbage_again()`, as it must once started. It is imported only
    when the command runs, so listing commands imports nothing. A name with a space (`"env validate"`) adds a
    sub-command to the group command of that name, whichever plugin brings the group.
    """

    name: str
    help: str
    target: str
    argv: bool = False
