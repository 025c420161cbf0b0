"""pass^k as τ-bench and τ²-bench estimate it: C(c, k) / C(n, k) per task, averaged over the tasks."""

from __future__ import annotations

from math import comb

import pytest
from agentenv_runtime.engine.passk import bundle_pass_hat_k, pass_hat_ks, shown


@pytest.mark.parametrize(("n", "c"), [(1, 0), (1, 1), (5, 3), (8, 8), (10, 1), (40, 17)])
def test_equals_the_binomial_ratio(n: int, c: int) -> None:
    assert pass_hat_ks(n, c) == pytest.approx([comb(c, k) / comb(n, k) for k in range(1, n + 1)], abs=1e-12)


def test_bundle_value_is_the_mean_over_tasks_up_to_the_fewest_rollouts() -> None:
    results = [{"name": "a", "passed": p} for p in (True, True, False)] + [
        {"name": "b", "passed": p} for p in (True, False, False, False)
    ]
    values = bundle_pass_hat_k(results)
    assert list(values) == [1, 2, 3]
    assert values[1] == pytest.approx((2 / 3 + 1 / 4) / 2)
    assert values[2] == pytest.approx((1 / 3 + 0) / 2)
    assert values[3] == 0.0


def test_a_thousand_rollouts_are_summed_without_a_thousand_rows() -> None:
    results = [{"name": str(t), "passed": i % (t + 2) != 0} for t in range(3) for i in range(1000)]
    values = bundle_pass_hat_k(results)
    assert len(values) == 1000 and values[1] > values[10] > values[1000] == 0.0
    rows = shown(values)
    assert [k for k, _ in rows] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000]


def test_refuses_more_successes_than_trials() -> None:
    with pytest.raises(ValueError, match=r"within 0\.\.2"):
        pass_hat_ks(2, 3)
