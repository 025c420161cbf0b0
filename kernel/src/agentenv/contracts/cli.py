"""CLI command contributions. Kept free of pydantic so `agentenv --help` stays fast."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CliCommand:
    """A sub-command `agentenv NAME`.

    `target` is `"package.module:attribute"` naming a `typer.Typer` app (or a plain function, which is
    wrapped in one). It is imported only when the command runs, so listing commands imports nothing.
    """

    name: str
    help: str
    target: str
