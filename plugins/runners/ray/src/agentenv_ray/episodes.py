"""Batched episodes on Ray actors: agentenv-rl's batch interface with its slots spread over a cluster.

Each actor holds a share of the slots as forks of one start (`agentenv_rl.api.LocalEpisodes`, the task's setup
runs once per actor); a batch call goes to every actor at once and the answers come back in slot order.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from agentenv_rl.api import LocalEpisodes, StepResult, shares, split_actions

from agentenv_ray.runner import connect


class _Share:
    """What one actor runs: its slots, in the driver's folder and with its AGENTENV_* variables."""

    def __init__(self, target: str, n: int, seed: int | None, options: dict[str, Any], cwd: str, env: dict[str, str]):
        os.chdir(cwd)
        os.environ.update(env)
        self.local = LocalEpisodes(target, n, seed=seed, **options)

    def call(self, method: str, *arguments: Any) -> Any:
        return getattr(self.local, method)(*arguments)

    def node(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())


class RayEpisodes:
    """`n` episodes of `target` on `workers` Ray actors (one CPU each), at `address` or on a local Ray."""

    def __init__(
        self, target: str, n: int, *, workers: int, address: str | None = None, seed: int | None = None, **options: Any
    ) -> None:
        import ray

        self._started = connect(address, workers)
        self.sizes = shares(n, workers)
        actor: Any = ray.remote(num_cpus=1)(_Share)
        env = {k: v for k, v in os.environ.items() if k.startswith("AGENTENV_")}
        self.actors: list[Any] = [actor.remote(target, size, seed, options, os.getcwd(), env) for size in self.sizes]

    def _all(self, method: str, arguments: list[tuple[Any, ...]]) -> list[Any]:
        import ray

        refs = [a.call.remote(method, *args) for a, args in zip(self.actors, arguments, strict=True)]
        return [item for part in ray.get(refs) for item in part]

    def reset(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return self._all("reset", [() for _ in self.actors])

    def step(self, actions: Sequence[StepAction]) -> list[StepResult | None]:
        return self._all("step", split_actions(actions, self.sizes))

    def states(self) -> list[dict[str, Any]]:
        return self._all("states", [() for _ in self.actors])

    def nodes(self) -> list[str]:
        """The Ray node each actor runs on, in slot order of the shares."""
        import ray

        return list(ray.get([a.node.remote() for a in self.actors]))

    def close(self) -> None:
        import ray

        for actor in self.actors:
            try:
                ray.get(actor.call.remote("close"))
            finally:
                ray.kill(actor)
        self.actors = []
        if self._started:
            ray.shutdown()


StepAction = Mapping[str, Any] | None
