"""`agentenv env validate ENV[,ENV…]|URL`: run the env validators and print a verdict per check.

Imported only when the command runs (typer, the gateway and the MCP SDK stay off `agentenv --help`).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated, Any

import typer

app = typer.Typer(add_completion=False, help="Validate installed envs or a served world.")


@app.command()
def validate(
    target: Annotated[
        str, typer.Argument(help="Installed env name(s) joined by commas (slack,email), or a served world's URL.")
    ],
    artifact: Annotated[
        list[str],
        typer.Option(
            "--artifact",
            "-a",
            help="NAME or ENV=NAME_OR_PATH to load; repeatable (default: each env's first packaged artifact).",
        ),
    ] = [],  # noqa: B006
    token: Annotated[
        str | None, typer.Option(help="Bearer token for a URL (or env:NAME).", envvar="AGENTENV_TOKEN")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdicts as JSON.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds each request may take.")] = 30.0,
) -> None:
    """Run verify_mcp_tool_schema, verify_spec_conformance (installed envs), verify_env_card,
    verify_env_core_protocol and verify_universe_load_export_roundtrip; exit 1 when a required check fails."""
    from agentenv import fail

    from agentenv_validators.client import ProbeError, WorldClient
    from agentenv_validators.suite import run_checks

    try:
        if target.startswith(("http://", "https://")):
            if artifact:
                fail(
                    "--artifact: a served world's data is its own; load data with `data/add` or omit --artifact", code=2
                )
            client = WorldClient(target, token=token, timeout=timeout)
            checks = asyncio.run(run_checks(client, classes=None, first_exports=None))
        else:
            checks = _validate_installed(target, artifact, timeout)
    except ProbeError as exc:
        fail(str(exc), code=2)
        return
    print_report(target, checks, as_json)


def print_report(target: str, checks: list[Any], as_json: bool) -> None:
    """A verdict per check (or JSON), then exit 1 when a required check failed."""
    report = {"target": target, "passed": all(c.passed for c in checks), "checks": [c.to_dict() for c in checks]}
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, default=str) + "\n")
    else:
        for check in checks:
            verdict = "SKIP" if check.skipped else ("PASS" if check.passed else "FAIL")
            sys.stdout.write(f"{verdict}  {check.step}: {check.reason}\n")
        failed = [c.step for c in checks if not c.passed]
        summary = f"FAILED: {', '.join(failed)}" if failed else "all required checks passed"
        sys.stdout.write(f"\n{target}: {summary}\n")
    if not report["passed"]:
        raise typer.Exit(1)


def _validate_installed(names: str, artifacts: list[str], timeout: float) -> list[Any]:
    from agentenv import fail
    from agentenv_runtime import ArtifactError, WorldError, build_world

    from agentenv_validators.env_steps import first_exports
    from agentenv_validators.suite import run_checks
    from agentenv_validators.target import env_classes, serve_world

    try:
        bare = build_world(names)
        specs = artifacts or [
            f"{env.name}={sorted(env.artifact_paths())[0]}" for env in bare.envs.values() if env.artifact_paths()
        ]
        world = build_world(names, artifacts=specs)
    except (WorldError, ArtifactError, ValueError, LookupError) as exc:
        fail(str(exc), code=2)
        raise AssertionError from None  # fail() exits
    classes = env_classes(world)
    exports = first_exports(classes, specs)
    with serve_world(world, timeout=timeout) as client:
        return asyncio.run(run_checks(client, classes=classes, first_exports=exports))
