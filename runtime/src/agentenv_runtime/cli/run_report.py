"""What `agentenv run` prints when its runs are done: per-run rows (a few runs), per-task aggregates (many
runs, or more than one rollout), pass^k, and the same in JSON.

A thousand rollouts are one aggregate row per task, never a thousand lines; `--json` keeps every run.
"""

from __future__ import annotations

from typing import Any

from agentenv import print_json, print_table

from agentenv_runtime.engine.aggregates import ROW_LIMIT, aggregate_rows, task_aggregates
from agentenv_runtime.engine.passk import bundle_pass_hat_k, shown


def report(results: list[dict[str, Any]], k: int, *, as_json: bool, extra: dict[str, Any] | None = None) -> bool:
    """Print the outcome of `results` (run summaries); True when every run passed (a run that was not graded
    did not pass). A batch (`extra` names its eval or seeds file) always gets the aggregate table, whatever its
    size: that table is what an eval is run for."""
    passed = all(r["passed"] is True for r in results)
    pass_k = bundle_pass_hat_k(results) if k > 1 else {}
    aggregates = task_aggregates(results)
    if as_json:
        print_json(
            {
                "passed": passed,
                **(extra or {}),
                "tasks": results,
                "aggregate": aggregates,
                **({"pass_hat_k": pass_k} if pass_k else {}),
            }
        )
        return passed
    if len(results) <= ROW_LIMIT:
        rows = [
            (
                r["name"],
                r["status"] if r.get("graded") is not False else f"{r['status']} (not graded)",
                "-" if r["score"] is None else f"{r['score']:.2f}",
                (r["trajectory_digest"] or "-")[:16],
                r["run_id"],
            )
            for r in results
        ]
        print_table(("TASK", "STATUS", "SCORE", "DIGEST", "RUN"), rows)
    else:
        print(f"{len(results)} runs: per-run rows left out (more than {ROW_LIMIT}); --json lists every run")
    _reasons(results)
    if k > 1 or len(results) > ROW_LIMIT or extra:
        print()
        print_table(*aggregate_rows(aggregates))
    not_graded = sum(1 for r in results if r.get("graded") is False)
    note = f" ({not_graded} not graded: a judge had no model; counted as not passed)" if not_graded else ""
    count = sum(r["passed"] is True for r in results)
    print(f"\n{'PASSED' if passed else 'FAILED'}: {count}/{len(results)} passed{note}")
    if pass_k:
        runs_of = [sum(1 for r in results if r["name"] == name) for name in {r["name"] for r in results}]
        each = f"{k} rollouts each" if len(set(runs_of)) == 1 else f"k up to {k}, the fewest rollouts of a task"
        print(f"\npass^k over {len(runs_of)} task(s), {each}:")
        print_table(("K", "PASS^K"), [(str(n), f"{value:.4f}") for n, value in shown(pass_k)])
    return passed


def _reasons(results: list[dict[str, Any]], most: int = 5) -> None:
    """Why failed runs failed (a few; `agentenv runs show RUN` has the rest): a run whose steps all succeeded
    but whose record could not be stored shows its score beside `failed`, which needs saying."""
    failed = [r for r in results if r.get("reason")]
    if failed:
        print()
    for r in failed[:most]:
        what = "" if r.get("stored", True) else "the run's record or trajectory could not be stored: "
        print(f"{r['name']}: failed: {what}{r['reason']} (run {r['run_id']})")
    if len(failed) > most:
        print(f"… and {len(failed) - most} more failed run(s): agentenv runs show RUN says why")
