"""`agentenv sandbox …`: the sandboxes runs started, across every provider, and removing leftovers."""

from __future__ import annotations

from typing import Annotated

import typer
from agentenv import fail, get_host, print_json, print_table
from agentenv.config import load_config

from agentenv_runtime.sandboxes import RUN_LABEL, providers_here

app = typer.Typer(
    help="Sandboxes started by runs: list them, prune leftovers.", no_args_is_help=True, add_completion=False
)
RunOption = Annotated[str | None, typer.Option("--run", help="Only sandboxes of this run id.")]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def _labels(run: str | None) -> dict[str, str]:
    return {RUN_LABEL: run} if run else {}


@app.command("list")
def list_sandboxes(run: RunOption = None, as_json: JsonFlag = False) -> None:
    """Every sandbox carrying a run label, per provider (and providers that cannot be asked here)."""
    rows = []
    here = providers_here(load_config(), get_host())
    if not here and not as_json:
        print("No sandbox providers installed. Add one: agentenv plugin add agentenv-sandbox-local (or -docker)")
        return
    for name, provider in here.items():
        if isinstance(provider, str):
            rows.append({"provider": name, "id": None, "status": "unavailable", "run": None, "note": provider})
            continue
        for sandbox in provider.list(_labels(run)):
            rows.append(
                {
                    "provider": name,
                    "id": sandbox.id,
                    "status": sandbox.status(),
                    "run": sandbox.labels.get(RUN_LABEL),
                    "note": "",
                }
            )
    if as_json:
        print_json(rows)
        return
    if not rows:
        print(f"No sandboxes started by runs ({', '.join(here)} asked).")
        return
    print_table(
        ("PROVIDER", "SANDBOX", "STATUS", "RUN", "NOTE"),
        [(r["provider"], r["id"] or "-", r["status"], r["run"] or "-", r["note"]) for r in rows],
    )


@app.command("prune")
def prune(
    run: RunOption = None,
    all_runs: Annotated[bool, typer.Option("--all", help="Every run's sandboxes (not only one run's).")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Tear down what a crashed or interrupted run left behind (`--run ID`), or everything (`--all`)."""
    if not run and not all_runs:
        fail("say which: --run RUN_ID (one run's leftovers) or --all (every run's)", 2)
    removed: dict[str, list[str]] = {}
    kept: dict[str, list[str]] = {}
    for name, provider in providers_here(load_config(), get_host()).items():
        if isinstance(provider, str):
            continue
        listed = [sandbox.id for sandbox in provider.list(_labels(run) if run else {})]
        removed[name] = provider.prune(_labels(run) if run else {})
        kept[name] = [sandbox_id for sandbox_id in listed if sandbox_id not in removed[name]]
    if as_json:
        print_json(removed)
        return
    for name, ids in removed.items():
        for sandbox_id in ids:
            print(f"removed {name} sandbox {sandbox_id}")
    for name, ids in kept.items():
        for sandbox_id in ids:
            print(f"kept {name} sandbox {sandbox_id}: its run is still going (stop that run first)")
    print(f"{sum(map(len, removed.values()))} sandbox(es) removed, {sum(map(len, kept.values()))} kept.")
