"""Workspace reset and fork of a 1,000-file repository in the process sandbox, and graded rollouts per second.

Prints ratios against a baseline measured in the same run: a plain `shutil.copytree` of the repository (what a
reset or fork costs without layers). Goals from issue 26: reset and fork ≤ 20 ms each.
The Docker half of the issue's benchmark (in-container exec server, warm pool) is not built yet.

    .venv/bin/python bench/workspace_bench.py
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agentenv_runtime import Artifact
from agentenv_workspace import layers
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
        layers.store().close()


if __name__ == "__main__":
    main()
