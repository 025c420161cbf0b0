"""The Ray runner and Ray-hosted episodes on a local cluster the test starts: a head with no CPUs and two worker
nodes with one CPU each (so every rollout runs on a worker node), bounded memory, stopped at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentenv_testing.installs import AGENTENV_VARS

AGENTENV = Path(sys.executable).with_name("agentenv")
NODE_MEMORY = {"object_store_memory": 100 * 1024 * 1024}
REFUND = {"tool": "issue_refund", "arguments": {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged"}}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from ray.cluster_utils import Cluster

    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, **NODE_MEMORY})
    try:
        for _ in range(2):
            made.add_node(num_cpus=1, **NODE_MEMORY)
        made.wait_for_nodes()
        yield made
    finally:
        made.shutdown()


def agentenv(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in AGENTENV_VARS}
    return subprocess.run([str(AGENTENV), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


def stable(record: dict[str, Any]) -> dict[str, Any]:
    """A run record without what differs between any two runs (ids, times, where files were put)."""
    # what differs by nature: ids, times, storage keys and the process that ran it (a Ray worker, or us)
    differ = ("id", "started_at", "finished_at", "trajectories", "final_states", "owner")
    kept = {k: v for k, v in record.items() if k not in differ}
    kept["steps"] = [{k: v for k, v in s.items() if k not in ("started", "duration_ms")} for s in record["steps"]]
    kept["steps"] = [s | {"output": {k: v for k, v in s["output"].items() if k != "files"}} for s in kept["steps"]]
    return kept


def records_by_seed(cwd: Path) -> dict[int, dict[str, Any]]:
    listed = json.loads(agentenv(cwd, "runs", "list", "--json", "--limit", "100").stdout)
    return {r["seed"]: json.loads(agentenv(cwd, "runs", "show", r["id"], "--json").stdout) for r in listed}


def test_the_ray_runners_records_equal_the_local_runners(cluster: Any, tmp_path: Path) -> None:
    local, remote = tmp_path / "local", tmp_path / "ray"
    local.mkdir()
    remote.mkdir()
    for agent in ("solver", "wrong_solver"):
        here = agentenv(local, "run", "support-refund", "-k", "3", "--agent", agent, "--json")
        there = agentenv(
            remote, "run", "support-refund", "-k", "3", "--agent", agent, "--runner", "ray",
            "--address", cluster.address, "--json",
        )  # fmt: skip
        assert there.returncode == here.returncode, there.stderr[-2000:]
        mine, theirs = json.loads(here.stdout)["tasks"], json.loads(there.stdout)["tasks"]
        assert [(t["seed"], t["score"], t["trajectory_digest"]) for t in theirs] == [
            (t["seed"], t["score"], t["trajectory_digest"]) for t in mine
        ]
        ours, rays = records_by_seed(local), records_by_seed(remote)
        assert set(ours) == set(rays) == {7, 8, 9}
        for seed in ours:
            assert stable(rays[seed]) == stable(ours[seed])
        for directory in (local, remote):  # the next agent's runs start from empty stores again
            subprocess.run(["rm", "-rf", str(directory / ".agentenv")], check=True)


def test_ray_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    kept = agentenv(tmp_path, "run", "support-refund", "--runner", "ray", "--keep")
    assert kept.returncode == 2 and "cannot --keep" in kept.stderr


def test_batched_episodes_on_ray_actors_step_independently(cluster: Any, tmp_path: Path) -> None:
    import ray
    from agentenv_ray.api import RayEpisodes

    os.chdir(tmp_path)
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        batch = RayEpisodes("support-refund", 3, workers=2)
        starts = batch.reset()
        assert [obs["type"] for obs, _ in starts] == ["prompt"] * 3
        start = {s["state_digest"] for s in batch.states()}
        assert len(start) == 1
        results = batch.step([REFUND, None, REFUND])
        assert results[0] is not None and results[0].observation["ok"] and results[1] is None
        digests = [s["state_digest"] for s in batch.states()]
        assert digests[1] in start and digests[0] == digests[2] and digests[0] not in start
        final = batch.step([{"answer": "refunded"}, {"answer": "nothing"}, None])
        assert final[0] is not None and final[1] is not None and final[0].reward > final[1].reward == 0.0
        head = ray.get_runtime_context().get_node_id()
        nodes = batch.nodes()
        assert len(set(nodes)) == 2 and head not in nodes, "the two actors run on the two worker nodes"
        batch.close()
    finally:
        ray.shutdown()


LOCAL = """
import json, ray
from agentenv_ray.runner import connect
started = connect(None, 1)
print(json.dumps({"started": started, "gcs": ray.get_runtime_context().gcs_address}))
ray.shutdown()
"""


def test_without_an_address_a_local_ray_starts_even_beside_another_cluster(cluster: Any, tmp_path: Path) -> None:
    """`ray.init(num_cpus=…)` joined the cluster RAY_ADDRESS names (or `ray start` left) and then refused num_cpus."""
    env = {**os.environ, "RAY_ADDRESS": cluster.address}
    proc = subprocess.run(
        [sys.executable, "-c", LOCAL], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["started"] is True and seen["gcs"] != cluster.address
