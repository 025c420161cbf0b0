"""`agentenv agent validate URL`: run the agent validators 38–49 against an A2A agent and print a verdict
per check.

A top-level plugin command `agent` (a group: `validate` is its sub-command). Imported only when the command
runs, so typer, the a2a SDK, the gateway and the MCP SDK stay off `agentenv --help`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

import typer

from agentenv_validators.cli import print_report

app = typer.Typer(add_completion=False, help="Validate A2A agents.", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Validate A2A agents (see `agentenv agent validate --help`)."""


async def run_agent_checks(
    url: str,
    *,
    timeout: float = 60.0,
    headers: dict[str, str] | None = None,
    skip: list[str] | None = None,
    provider: Callable[[], Any] | None = None,
) -> list[Any]:
    """Every agent validator's check against the agent at `url`, in order (38–49)."""
    from agentenv_validators import agent_checks as checks
    from agentenv_validators.agent_probe import AgentProbe
    from agentenv_validators.agent_target import AgentTarget
    from agentenv_validators.suite import Check

    target = AgentTarget(AgentProbe(url, timeout=timeout, headers=headers), url)
    plan: list[tuple[str, Callable[[], Any]]] = [
        ("verify_a2a_agent_card", lambda: checks.check_card(target)),
        ("verify_a2a_core_protocol", lambda: checks.check_core_protocol(target)),
        ("verify_a2a_modalities", lambda: checks.check_modalities(target)),
        ("verify_a2a_agent_config_identity", lambda: checks.check_identity(target)),
        ("verify_a2a_role", lambda: checks.check_role(target, None)),
        ("verify_a2a_system_prompt", lambda: checks.check_system_prompt(target)),
        ("verify_a2a_skill_config", lambda: checks.check_skills(target)),
        ("verify_a2a_agent_mcp", lambda: checks.check_mcp(target)),
        ("verify_a2a_trajectory", lambda: checks.check_trajectory(target)),
        ("verify_a2a_peer_agents", lambda: checks.check_peers(target)),
        ("verify_a2a_snapshot", lambda: checks.check_snapshot(target)),
        ("verify_a2a_install", lambda: checks.check_install(target, provider or _inline, timeout=timeout)),
    ]
    results = []
    for step, run in plan:
        if step in (skip or []):
            results.append(Check(step, skipped="--skip"))
            continue
        try:
            results.append(Check(step, rows=await run()))
        except Exception as exc:  # one check's crash is its verdict; the others still run
            from agentenv_validators.results import row

            results.append(Check(step, rows=[row("check ran", False, f"{type(exc).__name__}: {exc}")]))
    return results


def _inline() -> Any:
    from agentenv import get_host
    from agentenv.config import load_config
    from agentenv_runtime import make_provider

    return make_provider("inline", load_config(), get_host())


@app.command()
def validate(
    url: Annotated[
        str, typer.Argument(help="Base URL of the A2A agent (its card is at /.well-known/agent-card.json).")
    ],
    header: Annotated[
        list[str], typer.Option("--header", "-H", help="HTTP header NAME:VALUE sent to the agent; repeatable.")
    ] = [],  # noqa: B006
    skip: Annotated[list[str], typer.Option("--skip", help="A check (step type) not to run; repeatable.")] = [],  # noqa: B006
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdicts as JSON.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds each request or message may take.")] = 60.0,
) -> None:
    """Run the agent validators 38–49 against URL; exit 1 when a required check fails, 2 for bad input."""
    from agentenv import fail

    from agentenv_validators.agent_steps import AGENT_VALIDATORS

    if not url.startswith(("http://", "https://")):
        fail(f"URL: {url!r} is not an http(s) URL; give the A2A agent's base URL", code=2)
    known = {cls.name for cls in AGENT_VALIDATORS}
    unknown = [name for name in skip if name not in known]
    if unknown:
        fail(f"--skip: no check {unknown[0]!r} (checks: {', '.join(sorted(known))})", code=2)
    headers = {}
    for item in header:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            fail(f"--header: {item!r} is not NAME:VALUE", code=2)
        headers[name.strip()] = value.strip()
    checks = asyncio.run(run_agent_checks(url, timeout=timeout, headers=headers, skip=skip))
    print_report(url, checks, as_json)
