"""`agentenv serve` (serve a world) and `agentenv tools` (a CLI generated from a served world's tools).

Imported only when one of the commands runs, so typer, uvicorn and the MCP SDK stay off the path of
`agentenv --help`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from agentenv import fail, print_table


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


serve_app = typer.Typer(add_completion=False, help="Serve a world over HTTP.")
tools_app = typer.Typer(add_completion=False, help="List or call the tools of a served world.")


# ---- serve ---------------------------------------------------------------------------------------------
@serve_app.command()
def serve(
    envs: Annotated[str, typer.Argument(help="Env name, or several joined by commas (slack,email,helpdesk).")],
    artifact: Annotated[list[str], typer.Option("--artifact", "-a", help="NAME or ENV=NAME_OR_PATH; repeatable.")] = [],  # noqa: B006
    host: Annotated[str, typer.Option(help="Address to bind; non-loopback needs --token.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind (0 picks a free one).")] = 8000,
    token: Annotated[
        list[str],
        typer.Option("--token", help="ROLE=TOKEN or ROLE=env:NAME; repeatable. Role `control` may use the data plane."),
    ] = [],  # noqa: B006
    role_file: Annotated[
        Path | None,
        typer.Option("--role-file", help="TOML with one table per role, roles.NAME: tools, deny, token (env:NAME)."),
    ] = None,
    upstream: Annotated[
        list[str],
        typer.Option("--upstream", help="NAME=COMMAND… (stdio) or NAME=http://…/mcp: front an MCP server; repeatable."),
    ] = [],  # noqa: B006
    mcp: Annotated[
        list[str],
        typer.Option(
            "--mcp",
            help="NAME=COMMAND…, NAME=http://…/mcp, NAME=docker:IMAGE or NAME={json}: an MCP server as an env of "
            "the world, started and stopped with it, restarted on data/reset (needs agentenv-mcp); repeatable.",
        ),
    ] = [],  # noqa: B006
    url: Annotated[str | None, typer.Option(help="Public base URL for the card (default: from each request).")] = None,
    settings_file: Annotated[
        Path | None,
        typer.Option("--settings-file", help="JSON object: env name → that env's settings."),
    ] = None,
    seed: Annotated[int, typer.Option(help="World seed.")] = 0,
    start: Annotated[
        str | None,
        typer.Option(
            help="Arm the virtual clock at this ISO 8601 time, frozen as a task's deploy_env does "
            "(default: the clock reads real UTC time)."
        ),
    ] = None,
    rate: Annotated[
        float | None, typer.Option(help="With --start: let virtual time run, this many virtual seconds per second.")
    ] = None,
    reset_to: Annotated[
        str,
        typer.Option(
            "--reset-to",
            help="What data/reset without `to` means: empty (clear every env, as the reference's load path "
            "expects: reset, then data/add) or loaded (back to the last load).",
        ),
    ] = "empty",
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "warning",
) -> None:
    """Serve ENVS as one world: card, MCP at /mcp, JSON-RPC at /agentenv, REST at /rest, OpenAPI."""
    from agentenv.config import load_config
    from agentenv_runtime import ArtifactError, ToolSchemaError, WorldError, build_world

    from agentenv_gateway.app import build_app
    from agentenv_gateway.auth import AuthConfigError, check_bind, load_role_file, parse_token_flags
    from agentenv_gateway.limits import GatewayLimits
    from agentenv_gateway.server import ServeError, serve_forever
    from agentenv_gateway.upstream import UpstreamError

    if reset_to not in ("loaded", "empty"):
        fail(f"--reset-to {reset_to}: must be `loaded` (back to the last load) or `empty` (clear)", code=2)
        return
    stop_servers = _no_servers
    try:
        roles, tokens = load_role_file(role_file) if role_file else ({}, {})
        tokens |= parse_token_flags(token)
        check_bind(host, tokens)
        env_settings = _read_settings(settings_file) if settings_file else None
        limits = GatewayLimits.from_config(load_config())
        world = build_world(envs, artifacts=artifact, roles=roles or None, seed=seed, settings=env_settings)
        stop_servers = _attach_mcp(world, mcp)
        if rate is not None and start is None:
            raise ValueError("--rate: give --start too (the virtual time the clock starts from)")
        if start is not None:
            world.set_clock(start, mode="scaled" if rate is not None else "frozen", rate=rate)
        world.list_tools()  # every tool's schema, now: a type without one is refused here, not as HTTP 500 later
        app = build_app(
            world, tokens=tokens or None, upstreams=upstream or None, url=url, reset_to=reset_to, limits=limits
        )
    except (AuthConfigError, WorldError, ArtifactError, UpstreamError, ValueError, ToolSchemaError) as exc:
        stop_servers()
        where = f"{role_file}: " if role_file and str(exc).startswith("roles.") else ""
        fail(where + str(exc), code=2)
        return

    def ready(base: str) -> None:
        shown = url or base
        print(f"Serving world {world.name} at {shown}", file=sys.stderr)
        print(f"  card     {shown}/.well-known/agent-env.json", file=sys.stderr)
        print(f"  MCP      {shown}/mcp", file=sys.stderr)
        print(f"  JSON-RPC {shown}/agentenv   REST {shown}/rest/tools   OpenAPI {shown}/openapi.json", file=sys.stderr)
        if not tokens:
            print("  no tokens: loopback only, every caller is role `default`", file=sys.stderr)
        sys.stderr.flush()

    try:
        serve_forever(app, host, port, log_level=log_level, on_ready=ready)
    except ServeError as exc:
        fail(str(exc), code=1)
    except KeyboardInterrupt:
        pass
    finally:
        app.close()
        stop_servers()


def _no_servers() -> None:
    """What stops the `--mcp` servers when there are none."""


def _attach_mcp(world: Any, specs: list[str]) -> Callable[[], None]:
    """Start the `--mcp` servers as envs of `world`; returns what stops them. Errors come as ValueError."""
    if not specs:
        return _no_servers
    try:
        from agentenv_mcp.api import McpServerError, attach, close_servers, parse_spec
    except ImportError:
        raise ValueError("--mcp needs agentenv-mcp; install it with `agentenv plugin add agentenv-mcp`") from None
    try:
        attach(world, [parse_spec(spec) for spec in specs])
    except McpServerError as exc:
        raise ValueError(f"--mcp {exc}") from None
    return lambda: close_servers(world)


def _read_settings(path: Path) -> dict[str, dict[str, Any]]:
    """`--settings-file`: {env: {setting: value}}; a ValueError names the file and what is wrong."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"--settings-file {path}: cannot read it ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"--settings-file {path}: not valid JSON ({exc})") from None
    if not isinstance(document, dict) or not all(isinstance(v, dict) for v in document.values()):
        raise ValueError(f"--settings-file {path}: must be a JSON object of env name → object of settings")
    return document


# ---- tools ---------------------------------------------------------------------------------------------
def print_token_counts(listed: list[dict[str, Any]], only: list[str], as_json: bool) -> None:
    """`agentenv tools --tokens`: the prompt tokens of the role's tools and of `only`, full and short."""
    from agentenv_runtime import short_descriptions, tool_prompt_tokens

    names = {t["name"] for t in listed}
    unknown = sorted(set(only) - names)
    if unknown:
        fail(f"--only {', '.join(unknown)}: not tools of this role; choose from: {', '.join(sorted(names))}", code=2)
    sets = [("all", listed)] + ([("only", [t for t in listed if t["name"] in set(only)])] if only else [])
    rows = []
    for label, chosen in sets:
        for descriptions, tools in (("full", chosen), ("short", short_descriptions(chosen))):
            count, method = tool_prompt_tokens(tools)
            rows.append(
                {
                    "tools": label,
                    "count": len(tools),
                    "descriptions": descriptions,
                    "tokens": count,
                    "counted_with": method,
                }
            )
    if as_json:
        print_json(rows)
        return
    print_table(
        ("TOOLS", "COUNT", "DESCRIPTIONS", "TOKENS", "COUNTED WITH"),
        [(r["tools"], str(r["count"]), r["descriptions"], f"{r['tokens']:,}", r["counted_with"]) for r in rows],
    )
    if rows[0]["counted_with"] == "estimate":
        print("(estimate: characters / 3.5; pip install 'agentenv-runtime[tokens]' counts with o200k_base)")


@tools_app.command(
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "allow_interspersed_args": False},
)
def tools(
    ctx: typer.Context,
    url: Annotated[str, typer.Option(help="Base URL of the served world (where its card lives).")],
    tool: Annotated[str | None, typer.Argument(help="Tool to call; omit to list the tools.")] = None,
    token: Annotated[
        str | None, typer.Option(help="Bearer token (default: $AGENTENV_TOKEN).", envvar="AGENTENV_TOKEN")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="List tools as JSON.")] = False,
    tokens: Annotated[
        bool,
        typer.Option(
            "--tokens",
            help="Count the prompt tokens of the role's tools (as OpenAI function tools), with full and short "
            "descriptions, and of the --only ones.",
        ),
    ] = False,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="With --tokens: also count just these tools (repeat it).")
    ] = None,
    timeout: Annotated[float, typer.Option(help="HTTP timeout in seconds.")] = 60.0,
) -> None:
    """List a served world's tools, or call TOOL with options generated from its input schema.

    `agentenv tools --url URL TOOL --help` shows TOOL's options; `--tokens` counts what the tools cost a prompt.
    """
    from agentenv_gateway.tool_target import TargetError, ToolTarget
    from agentenv_gateway.toolcli import ArgError, parse_tool_args, tool_help

    try:
        target = ToolTarget(url, token, timeout=timeout)
    except TargetError as exc:
        fail(str(exc), code=2)
        return
    try:
        try:
            listed = {t["name"]: t for t in target.list_tools()}
        except TargetError as exc:
            fail(str(exc), code=2)
            return
        if tokens:
            print_token_counts(list(listed.values()), only or [], as_json)
            return
        if tool is None:
            if as_json:
                print_json(list(listed.values()))
            else:
                print_table(("TOOL", "DESCRIPTION"), [(t["name"], t.get("description", "")) for t in listed.values()])
            return
        if tool not in listed:
            import difflib

            close = difflib.get_close_matches(tool, listed, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            fail(f"no tool {tool!r} for this role.{hint} Run without TOOL to list them.", code=2)
        spec = listed[tool]
        if any(arg in ("--help", "-h") for arg in ctx.args):
            print(tool_help(spec, target.base))
            return
        try:
            arguments = parse_tool_args(spec.get("inputSchema") or {}, ctx.args)
        except ArgError as exc:
            fail(f"{tool}: {exc} (see `agentenv tools --url {target.base} {tool} --help`)", code=2)
            return
        payload = target.call(tool, arguments)
    finally:
        target.close()
    if payload.get("ok"):
        print_json(payload["result"])
        return
    print_json(payload.get("error", payload))
    raise SystemExit(1)
