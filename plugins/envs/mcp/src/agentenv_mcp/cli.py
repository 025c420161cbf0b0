"""`agentenv mcp probe NAME=SERVER`: what a world would see of an MCP server, before a task relies on it."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

mcp_app = typer.Typer(add_completion=False, help="MCP servers as envs.")


@mcp_app.callback()
def main() -> None:
    """MCP servers as envs (a group, so that more commands can join `probe`)."""


@mcp_app.command()
def probe(
    server: Annotated[
        str, typer.Argument(help="NAME=COMMAND…, NAME=http://host/mcp, NAME=docker:IMAGE or NAME={json spec}.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the tools as JSON.")] = False,
) -> None:
    """Start the server, check its tools' schemas as a world does, list them, and stop it."""
    from agentenv_mcp.api import McpServerError, McpSpecError, parse_spec, start_env

    try:
        env = start_env(parse_spec(server, option="probe"))
    except (McpSpecError, McpServerError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    try:
        tools = [spec.describe() | {"name": name} for name, spec in env.tool_specs().items()]
    finally:
        env.close()
    if as_json:
        sys.stdout.write(json.dumps(tools, indent=2) + "\n")
        return
    print(f"env {env.name}: {len(tools)} tool(s)")
    for tool in tools:
        first_line = next(iter((tool.get("description") or "").strip().splitlines()), "")
        print(f"  {tool['name']}: {first_line}")
