"""`agentenv run -k N --runner ray [--address HOST:PORT]`: the rollouts as Ray tasks.

Each task runs the runtime's own `rollout_worker` on a chunk of seeds (the same function the local
`--workers` processes run), in the driver's working folder and with its `AGENTENV_*` variables, so records and
trajectories go to the same configured stores and are the same records a local run writes. Without
`--address` a local Ray instance with `--workers` CPUs is started for the run and stopped after it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenv_runtime import RolloutJob, RolloutRunner, TaskFile, rollout_jobs, rollout_worker


def run_chunk(job: RolloutJob, cwd: str, environment: dict[str, str]) -> list[dict[str, Any]]:
    """On a Ray worker: the driver's folder and variables, then the runtime's rollouts of the chunk."""
    os.chdir(cwd)
    os.environ.update(environment)
    return rollout_worker(job)


def connect(address: str | None, workers: int) -> bool:
    """Join the cluster at `address`, or start a local one; True when this call started Ray.

    Without an address the local instance is asked for by name (`address="local"`): `ray.init()` alone joins any
    cluster it finds (`RAY_ADDRESS`, or one `ray start` left on the machine) and then refuses `num_cpus`."""
    import ray

    if ray.is_initialized():
        return False
    if address is None:
        ray.init(
            address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False
        )
    else:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    return True


class RayRunner(RolloutRunner):
    name = "ray"
    description = "Rollouts as Ray tasks on a cluster (--address) or a local Ray instance with --workers CPUs."

    def run(
        self,
        task: TaskFile,
        seeds: list[int],
        *,
        bundle: str | None,
        bundle_dir: Path | None,
        overrides: dict[str, Any],
        on_done: Callable[[dict[str, Any]], None],
    ) -> list[dict[str, Any]]:
        import ray

        started = connect(self.settings.address, self.settings.workers)
        try:
            resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
            workers = max(self.settings.workers, int(resources.get("CPU", 1)))
            jobs = rollout_jobs(task, seeds, workers, bundle, bundle_dir, overrides)
            environment = {k: v for k, v in os.environ.items() if k.startswith("AGENTENV_")}
            remote = ray.remote(num_cpus=1)(run_chunk)
            pending = [remote.remote(job, os.getcwd(), environment) for job in jobs]
            results: list[dict[str, Any]] = []
            for ref in pending:  # in seed order; the later chunks keep running meanwhile
                for summary in ray.get(ref):
                    on_done(summary)
                    results.append(summary)
            return results
        finally:
            if started:
                ray.shutdown()
