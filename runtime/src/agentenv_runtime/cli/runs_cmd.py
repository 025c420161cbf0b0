"""`agentenv runs …`: stored run records and their trajectories."""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer
from agentenv.cli.output import fail, print_json, print_table
from agentenv.config import ConfigError, load_config
from agentenv.plugins.host import get_host

from agentenv_runtime.engine.records import Records

app = typer.Typer(help="Stored runs and their trajectories.", no_args_is_help=True, add_completion=False)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def _records() -> Records:
    try:
        return Records(load_config(), get_host())
    except (ConfigError, LookupError) as exc:  # a store setting's reference, or a store nobody provides
        fail(str(exc))
        raise


def _get(run_id: str) -> dict:  # type: ignore[type-arg]
    try:
        return _records().get(run_id)
    except LookupError as exc:
        fail(f"{exc}; see `agentenv runs list`")
        raise


@app.command("list")
def list_runs(
    task: Annotated[str | None, typer.Option(help="Only runs of this task.")] = None,
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 20,
    as_json: JsonFlag = False,
) -> None:
    """Recent runs, newest first."""
    records = _records().list(limit, **({"task": task} if task else {}))
    if as_json:
        print_json(
            [
                {
                    k: r.get(k)
                    for k in ("id", "task", "status", "passed", "score", "seed", "trajectory_digest", "started_at")
                }
                for r in records
            ]
        )
        return
    print_table(
        ("RUN", "TASK", "STATUS", "SCORE", "SEED", "STARTED"),
        [
            (
                r["id"],
                r["task"],
                r["status"],
                "-" if r.get("score") is None else f"{r['score']:.2f}",
                r["seed"],
                time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r["started_at"])),
            )
            for r in records
        ],
    )


@app.command("show")
def show(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")], as_json: JsonFlag = False
) -> None:
    """One run: every step's status, timing and output; score, digest and plugin versions."""
    record = _get(run_id)
    if as_json:
        print_json(record)
        return
    score = "-" if record.get("score") is None else f"{record['score']:.3f}"
    print(f"run {record['id']}  task {record['task']}  {record['status']}  passed={record['passed']}  score={score}")
    print(f"seed {record['seed']}  digest {record.get('trajectory_digest')}")
    print_table(
        ("STEP", "TYPE", "STATUS", "MS", "ERROR"),
        [
            (s["id"], s["type"], s["status"], f"{s['duration_ms'] or 0:.1f}", s.get("error") or "")
            for s in record["steps"]
        ],
    )
    print("plugins: " + ", ".join(f"{d} {v}" for d, v in sorted(record.get("plugin_versions", {}).items())))


@app.command("trajectory")
def trajectory(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")], as_json: JsonFlag = False
) -> None:
    """Every tool call, trigger firing and access change of the run, in order."""
    record = _get(run_id)
    objects = _records().objects
    events = []
    for world, key in (record.get("trajectories") or {}).items():
        for line in objects.get(key).decode().splitlines():
            events.append({"world": world, **json.loads(line)})
    if as_json:
        print_json(events)
        return
    for e in events:
        what = e.get("tool") or e.get("trigger") or e.get("role")
        outcome = "error: " + e["error"]["message"] if e.get("error") else ""
        print(f"{e['seq']:>4} {e['virtual_time'][:19]} {e['kind']:<9} {e.get('role') or '':<12} {what} {outcome}")
