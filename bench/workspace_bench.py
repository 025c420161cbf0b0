"""Workspace reset and fork of a 1,000-file repository in the process sandbox, and graded rollouts per second.

Prints ratios against baselines measured in the same run: a plain `shutil.copytree` of the repository (what a
reset or fork costs without layers), `docker exec` on the same container (against the in-container exec
server), a cold `docker run` until the server answers (against taking a started container from the warm pool).
Goals from issue 26: reset and fork ≤ 20 ms each; exec and warm start ≥ 10x. `--no-docker` skips the Docker half.

    .venv/bin/python bench/workspace_bench.py
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentenv_runtime import Artifact
from agentenv_workspace import layers, sandbox
from agentenv_workspace.env import WorkspaceEnv

FILES = 1000
ROUNDS = 30


def make_repo(folder: Path) -> Artifact:
    repo = folder / "repo"
    for index in range(FILES):
        path = repo / f"pkg{index % 25}" / f"module_{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE_{index} = {index}\n" * 20)
    spec = folder / "repo.json"
    spec.write_text(json.dumps({"name": "repo", "env": "workspace", "version": "1", "data": {"folder": "repo"}}))
    return Artifact.from_file(spec)


def timed(action: object, rounds: int = ROUNDS) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        artifact = make_repo(folder)
        env = WorkspaceEnv()
        env.load(artifact)
        start = env.snapshot()
        print(f"overlay layers: {layers.store().overlay}")

        copies = iter(range(10**6))
        baseline = timed(lambda: shutil.copytree(folder / "repo", folder / f"copy{next(copies)}"), 10)

        def reset() -> None:
            env.call("write_file", {"path": "pkg0/module_0.py", "content": "changed\n"})
            env.restore(start)
            assert env.root.is_dir()

        def fork() -> None:
            child = env.fork()
            assert (child.root / "pkg0" / "module_0.py").is_file()
            child.close()

        reset_ms, fork_ms = timed(reset), timed(fork)
        print(f"copytree baseline: {baseline:.2f} ms")
        print(f"reset (edit, restore, tree ready): {reset_ms:.2f} ms  ({baseline / reset_ms:.1f}x faster than a copy)")
        print(f"fork (new tree ready): {fork_ms:.2f} ms  ({baseline / fork_ms:.1f}x faster than a copy)")

        from agentenv_rl.api import make

        episode = make("coding:fix-bug")
        fix = "--- a/calc.py\n+++ b/calc.py\n@@ -4,2 +4,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
        episode.reset()
        started = time.perf_counter()
        graded = 0
        for _ in range(3):
            group = [episode.fork() for _ in range(8)]
            for child in group:
                child.step({"tool": "apply_patch", "arguments": {"patch_text": fix}})
                assert child.step({"answer": "done"}).reward == 1.0
                graded += 1
        seconds = time.perf_counter() - started
        print(f"graded coding rollouts (fix-bug, groups of 8 forks, sequential): {graded / seconds:.1f}/s")
        episode.close()
        if "--no-docker" not in sys.argv:
            docker_half(artifact)
        layers.store().close()


def docker_half(artifact: Artifact) -> None:
    import subprocess

    from agentenv_workspace import container

    cold_env = WorkspaceEnv({"sandbox": "docker"})
    cold_env.load(artifact)
    limits = sandbox.Limits(60, 2048, 256, 64)
    started = time.perf_counter()
    running = cold_env.container(limits, {})
    cold = (time.perf_counter() - started) * 1000
    server = timed(lambda: running.exec("true", cwd=".", timeout=30, output_limit=1000), 20)
    argv = ["docker", "exec", running.container_id, "sh", "-c", "true"]
    docker_exec = timed(lambda: subprocess.run(argv, check=True, capture_output=True), 10)
    print(f"exec round trip: server {server:.1f} ms, docker exec {docker_exec:.1f} ms ({docker_exec / server:.1f}x)")

    pooled = WorkspaceEnv({"sandbox": "docker", "warm_pool": 2})
    pooled.load(artifact)
    warm_pool = container.pool(container.DEFAULT_IMAGE, mount_point="/workspace", network=False, limits=limits, size=2)
    warm_pool.fill()
    samples = []
    for _ in range(4):
        child = pooled.fork()
        assert child.root.is_dir()  # the tree, as an episode has it before its first command
        began = time.perf_counter()
        child.container(limits, {})
        samples.append((time.perf_counter() - began) * 1000)
        child.close()
        warm_pool.fill()  # each claim is measured with the pool full again, as a steady-state episode finds it
    warm = statistics.median(samples)
    print(f"episode start: warm pool {warm:.1f} ms, cold docker run {cold:.1f} ms ({cold / warm:.1f}x)")

    start = pooled.snapshot()
    pooled.container(limits, {})
    resets = []
    for _ in range(4):
        pooled.call("write_file", {"path": "pkg0/module_0.py", "content": "changed\n"})
        warm_pool.fill()
        began = time.perf_counter()
        pooled.restore(start)
        pooled.container(limits, {})
        resets.append((time.perf_counter() - began) * 1000)
    reset_ms = statistics.median(resets)
    print(f"docker reset (restore + a started container on the fresh tree): {reset_ms:.1f} ms")
    cold_env.close()
    pooled.close()


if __name__ == "__main__":
    main()
