"""`agentenv runs …`: stored run records and their trajectories."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer
from agentenv import fail, get_host, print_json, print_table
from agentenv.config import ConfigError, load_config

from agentenv_runtime.engine.records import Records, StoreError
from agentenv_runtime.engine.runner import combine_digests
from agentenv_runtime.world.trajectory import trajectory_digest

app = typer.Typer(help="Stored runs and their trajectories.", no_args_is_help=True, add_completion=False)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def _records() -> Records:
    try:
        return Records(load_config(), get_host())
    except (ConfigError, StoreError, LookupError) as exc:  # a store setting, a failing store, or none provided
        fail(str(exc))
        raise


def _get(run_id: str) -> dict[str, Any]:
    try:
        return _records().get(run_id)
    except StoreError as exc:
        fail(str(exc))
    except LookupError as exc:
        fail(f"{exc}; see `agentenv runs list`")


def _started(record: dict[str, Any]) -> str:
    started = record.get("started_at")
    if not isinstance(started, int | float):
        return "?"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started))


def _score(record: dict[str, Any], digits: int = 2) -> str:
    score = record.get("score")
    return f"{score:.{digits}f}" if isinstance(score, int | float) else "-"


def _status(record: dict[str, Any]) -> str:
    """The run's status; a run whose verifier could not grade (no judge model) says so: it did not pass."""
    status = str(record.get("status", "damaged record"))
    return f"{status} (not graded)" if record.get("graded") is False else status


@app.command("list")
def list_runs(
    task: Annotated[str | None, typer.Option(help="Only runs of this task.")] = None,
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 20,
    as_json: JsonFlag = False,
) -> None:
    """Recent runs, newest first."""
    try:
        records = _records().list(limit, **({"task": task} if task else {}))
    except StoreError as exc:
        fail(str(exc))
    if as_json:
        print_json(
            [
                {
                    k: r.get(k)
                    for k in (
                        "id",
                        "task",
                        "status",
                        "passed",
                        "graded",
                        "score",
                        "seed",
                        "trajectory_digest",
                        "started_at",
                    )
                }
                for r in records
            ]
        )
        return
    print_table(
        ("RUN", "TASK", "STATUS", "SCORE", "SEED", "STARTED"),
        [
            (
                r.get("id", "?"),
                r.get("task", "?"),
                _status(r),
                _score(r),
                r.get("seed", "?"),
                _started(r),
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
    head = f"run {record.get('id')}  task {record.get('task')}  {_status(record)}"
    print(f"{head}  passed={record.get('passed')}  score={_score(record, 3)}")
    for step_id, output in (record.get("verifiers") or {}).items():
        if isinstance(output, dict) and output.get("graded") is False:
            names = ", ".join(str(n) for n in output.get("not_graded") or []) or "its criteria"
            print(f"not graded: {step_id} could not grade {names} (no judge model); the run did not pass")
    print(f"seed {record.get('seed')}  digest {record.get('trajectory_digest')}")
    steps = [s for s in record.get("steps") or [] if isinstance(s, dict)]
    print_table(
        ("STEP", "TYPE", "STATUS", "MS", "ERROR"),
        [
            (s.get("id"), s.get("type"), s.get("status"), f"{s.get('duration_ms') or 0:.1f}", s.get("error") or "")
            for s in steps
        ],
    )
    _verifier_rows(record.get("verifiers"))
    for problem in record.get("store_errors") or []:
        print(f"store error: {problem}")
    print("plugins: " + ", ".join(f"{d} {v}" for d, v in sorted(record.get("plugin_versions", {}).items())))


def _verifier_rows(verifiers: Any) -> None:
    """Each verifier's criteria: what was checked, whether it held, its score and weight, and the evidence."""
    rows = []
    for step_id, output in (verifiers or {}).items():
        for index, row in enumerate((output or {}).get("rows") or [] if isinstance(output, dict) else []):
            if not isinstance(row, dict):
                continue
            name = row.get("criterion") or row.get("check") or row.get("name") or f"row {index}"
            passed = "-" if row.get("passed") is None else ("yes" if row["passed"] else "no")
            weight = row.get("weight")
            detail = " ".join(str(row.get("detail") if row.get("detail") is not None else "-").split())
            rows.append((step_id, name, passed, _score(row), "-" if weight is None else f"{weight:g}", detail[:160]))
    if rows:
        print_table(("VERIFIER", "CRITERION", "PASSED", "SCORE", "WEIGHT", "DETAIL"), rows)


@app.command("trajectory")
def trajectory(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")],
    as_json: JsonFlag = False,
    agent: Annotated[
        bool, typer.Option("--agent", help="The agent's view: messages, tool calls with results, token usage.")
    ] = False,
) -> None:
    """Every tool call, trigger firing and access change of the run, in order (`--agent`: the agent's view)."""
    record = _get(run_id)
    stored = record.get("trajectories") or {}
    if not stored:
        fail(f"run {record.get('id')} recorded no trajectory (status {record.get('status')})")
    records = _records()
    events: list[dict[str, Any]] = []
    digests: dict[str, str] = {}
    for world, key in stored.items():
        try:
            lines = [json.loads(line) for line in records.get_object(key).decode().splitlines() if line.strip()]
        except StoreError as exc:
            fail(str(exc))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            fail(f"the trajectory {key} of run {record.get('id')} is damaged ({exc}); it cannot be shown")
        digests[world] = trajectory_digest(lines)
        events.extend({"world": world, **e} for e in lines)
    recorded = record.get("trajectory_digest")
    if recorded and combine_digests(digests) != recorded:
        fail(
            f"the stored trajectory of run {record.get('id')} does not match its recorded digest "
            f"{str(recorded)[:16]}…: it was damaged or changed after the run"
        )
    if agent:
        from agentenv_runtime.cli.agent_view import print_views, stored_views, world_view

        try:
            views = stored_views(record, records.get_object) or world_view(events)
        except (StoreError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            fail(f"the agent view of run {record.get('id')} cannot be read ({exc})")
        print_json(views) if as_json else print_views(views)
        return
    if as_json:
        print_json(events)
        return
    for e in events:
        what = e.get("tool") or e.get("trigger") or e.get("role")
        outcome = "error: " + e["error"]["message"] if e.get("error") else ""
        print(f"{e['seq']:>4} {e['virtual_time'][:19]} {e['kind']:<9} {e.get('role') or '':<12} {what} {outcome}")
