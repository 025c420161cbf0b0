"""pass^k: the chance that k rollouts of a task, drawn from the n made, all pass, averaged over the tasks.

τ-bench's estimator (arXiv 2406.12045), the one τ²-bench reports: per task C(c, k) / C(n, k) with c of n
rollouts passed, for k = 1..n; the mean over tasks. Computed as the product (c-i)/(n-i), i < k, which is the
same number without the huge binomials, so pass^1..pass^1000 of a bundle cost a millisecond per task.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

SHOWN_ROWS = 10
"""Up to this many k, every pass^k is printed; beyond, powers of two and the last (the JSON has them all)."""


def pass_hat_ks(trials: int, successes: int) -> list[float]:
    """pass^k for k = 1..trials of one task with `successes` passes out of `trials`."""
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be within 0..{trials}, got {successes}")
    values, running = [], 1.0
    for i in range(trials):
        running *= (successes - i) / (trials - i) if successes > i else 0.0
        values.append(running)
    return values


def bundle_pass_hat_k(results: Iterable[Mapping[str, Any]]) -> dict[int, float]:
    """pass^k for k = 1..K over every task of a run, K being the fewest rollouts any task has; the mean of the
    tasks' values. Each result is a run summary with `name` and `passed`."""
    by_task: dict[str, list[bool]] = defaultdict(list)
    for result in results:
        by_task[str(result["name"])].append(bool(result["passed"]))
    if not by_task:
        return {}
    k_max = min(len(outcomes) for outcomes in by_task.values())
    totals = [0.0] * k_max
    for outcomes in by_task.values():
        for index, value in enumerate(pass_hat_ks(len(outcomes), sum(outcomes))[:k_max]):
            totals[index] += value
    return {k: totals[k - 1] / len(by_task) for k in range(1, k_max + 1)}


def shown(values: Mapping[int, float]) -> list[tuple[int, float]]:
    """The rows a terminal shows: all up to SHOWN_ROWS, else k = 1, 2, 4, 8, … and the last k."""
    ks = sorted(values)
    if len(ks) <= SHOWN_ROWS:
        return [(k, values[k]) for k in ks]
    picked = [k for k in ks if k & (k - 1) == 0]
    if ks[-1] not in picked:
        picked.append(ks[-1])
    return [(k, values[k]) for k in picked]
